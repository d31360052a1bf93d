"""The ladder's figures: pages with 100,000 stored matches, matches/s, live latency.

Usage: .venv/bin/python benchmarks/ladder.py [--quick] [--matches N] [--keep DIR]
       [--skip-pages] [--skip-throughput] [--skip-live]

(a) **Pages with N stored matches** (default 100,000; ``--quick``: 10,000): seeds a SQLite file
    with a ladder of 16 bots and N finished matches of 2-4 players in bulk (executemany, one
    transaction), then times the web app over HTTP (uvicorn on loopback, 20 requests each after a
    warm-up; median and 95th percentile): ``/api/ladder``, ``/ladder``, a bot's charts page and,
    when ``arena serve``'s app is there, its bot page; plus ``/leaderboard`` (the all-matches
    leaderboard that refits every system from all results: cold and warm).  The synthetic
    matches are valid rows: each copies the scores of a real game played by the engine (its
    placings follow the scores, its seats get them by hidden strengths plus noise) and is rated
    by the ladder's own incremental OpenSkill in order; replays are stored for the last 1,000
    only (the timed pages never read replays, and 100,000 records would be ~1 GB).
(b) **Matches per second**: 4 copies of the greedy sample bot (so every table takes as long,
    whoever sits at it) with 2 worker processes, a plain round robin (tables of 2) and the ladder
    with as many tables (tables of 2), each from a cold start, alternately 3 times (``--quick``:
    once; after an untimed warm-up pair): the medians of the ladder's matches/s, decisions/s
    (games differ in length by seed) and share of the time the workers were in a match, over
    the round robin's.
(c) **Live latency**: a ladder match played by real bots and watched over the SSE endpoint:
    for every step, the time from the referee applying it (its wall clock, sent with the step)
    to the watcher reading it (p50, p95).  The browser test measures the same in Chromium.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.engine import apply, apply_throw, legal_actions, new_game  # noqa: E402
from arena.engine.chance import DiceStream  # noqa: E402
from arena.engine.record import RecordWriter  # noqa: E402
from arena.ratings.incremental import Belief  # noqa: E402
from arena.ratings.incremental import apply as rate  # noqa: E402
from arena.store.bots import add_bot  # noqa: E402
from arena.store.db import Database  # noqa: E402

BOTS = ROOT / "bots"
TEMPLATES = 8  # real games per table size whose scores the synthetic matches copy
REPLAYS = 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def play_template(players: int, seed: int) -> tuple[str, list[int]]:
    """A real game (random legal actions): its record and final scores."""
    rng = random.Random(seed)
    w = RecordWriter(players, seed)
    s = new_game(players)
    dice = DiceStream(seed)
    while not s.is_over:
        if s.is_chance:
            faces = dice.throw(s.turn, s.throw_no + 1, s.dice)
            w.throw(faces)
            s = apply_throw(s, faces)
        else:
            a = rng.choice(legal_actions(s))
            w.decision(s, a)
            s = apply(s, a)
    w.finish(s)
    result = json.loads(w.lines[-1])
    return w.text(), [int(x) for x in result["scores"]]


def seed_database(path: Path, n: int) -> tuple[str, dict[str, float]]:
    """A ladder with ``n`` finished matches in a new SQLite file; its URL and timings."""
    from arena.ladder.field import active_versions, ensure_ladder, sync_field

    t0 = time.perf_counter()
    url = f"sqlite:///{path}"
    db = Database(url)
    folder = path.parent / "bots"
    folder.mkdir(exist_ok=True)
    names = [f"bot{i:02d}" for i in range(16)]
    for i, name in enumerate(names):
        src = BOTS / f"{('greedy', 'invader', 'random')[i % 3]}_bot.py"
        f = folder / f"{name}.py"
        f.write_text(src.read_text() + f"# {name}\n")
        add_bot(db, name, f)
    ladder = ensure_ladder(db, seed=1, table_sizes=(2, 3, 4), sandbox=None)
    assert ladder.id is not None
    tid = ladder.id
    field = sync_field(db, tid, active_versions(db))
    db.close()
    templates = {k: [play_template(k, 100 * k + t) for t in range(TEMPLATES)] for k in (2, 3, 4)}
    blobs = {
        (k, t): (zlib.compress(text.encode(), 6), hashlib.sha256(text.encode()).hexdigest(), len(text))
        for k, games in templates.items()
        for t, (text, _) in enumerate(games)
    }
    made = time.perf_counter()
    rng = random.Random(7)
    strength = {v: rng.gauss(0, 1) for v in field}
    start = datetime.now(UTC) - timedelta(days=30)
    step = timedelta(days=30) / n
    matches, seats, replays, history = [], [], [], []
    beliefs: dict[int, Belief] = {}
    fmt = "%Y-%m-%d %H:%M:%S.%f"
    for i in range(n):
        mid = i + 1
        k = (2, 3, 4)[i % 3]
        t = rng.randrange(TEMPLATES)
        scores = sorted(templates[k][t][1], reverse=True)
        table = rng.sample(field, k)
        order = sorted(table, key=lambda v: -(strength[v] + rng.gauss(0, 1.5)))
        score_of = dict(zip(order, scores, strict=True))
        sc = [score_of[v] for v in table]
        placings = [1 + sum(1 for w in sc if w > x) for x in sc]
        at = (start + step * i).strftime(fmt)
        matches.append(
            (mid, tid, i, rng.randrange(2**62), f"L{i}", i, "finished", "normal", 1, at, at, at, 1.0)
        )
        for seat, (v, s, p) in enumerate(zip(table, sc, placings, strict=True)):
            seats.append((mid, seat, v, s, p, "normal", 0.01, 0.001, 40, 0.01))
        after = rate(beliefs, table, placings)
        beliefs.update(after)
        for v, p in zip(table, placings, strict=True):
            b = after[v]
            history.append((tid, mid, v, b.mu, b.sigma, b.games, p, at))
        if i >= n - REPLAYS:
            data, digest, size = blobs[(k, t)]
            replays.append((mid, digest, size, data))
    last = {v: i for i, (_, mid, v, *_rest) in enumerate(history)}
    ratings = [
        (tid, v, b.mu, b.sigma, b.games, history[last[v]][1], history[last[v]][7]) for v, b in beliefs.items()
    ]
    built = time.perf_counter()
    con = sqlite3.connect(path)
    with con:
        con.executemany(
            "INSERT INTO match (id, tournament_id, ordinal, seed, group_key, round, status, termination, "
            "attempts, created_at, started_at, finished_at, duration) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            matches,
        )
        con.executemany(
            "INSERT INTO matchseat (match_id, seat, bot_version_id, score, placing, termination, "
            "think_total, think_max, decisions, cpu_time) VALUES (?,?,?,?,?,?,?,?,?,?)",
            seats,
        )
        con.executemany("INSERT INTO replay (match_id, sha256, size, data) VALUES (?,?,?,?)", replays)
        con.executemany(
            "INSERT INTO ladder_rating_history (tournament_id, match_id, bot_version_id, mu, sigma, games, "
            "placing, at) VALUES (?,?,?,?,?,?,?,?)",
            history,
        )
        con.executemany(
            "INSERT INTO ladder_rating (tournament_id, bot_version_id, mu, sigma, games, last_match_id, "
            "updated_at) VALUES (?,?,?,?,?,?,?)",
            ratings,
        )
        con.execute("UPDATE tournament SET status = 'running' WHERE id = ?", (tid,))
    con.close()
    inserted = time.perf_counter()
    from arena.ladder.ratings import refit

    db = Database(url)
    refit(db, tid)
    db.close()
    fitted = time.perf_counter()
    return url, {
        "templates_s": made - t0,
        "build_s": built - made,
        "insert_s": inserted - built,
        "seed_total_s": inserted - t0,
        "refit_s": fitted - inserted,
    }


class Server:
    """The web app on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)
        self.base = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def fetch(url: str, timeout: float = 600) -> tuple[int, float]:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as r:
        r.read()
        return r.status, time.perf_counter() - t


def time_pages(url: str, repeat: int = 20) -> dict[str, Any]:
    db = Database(url)
    try:
        from arena.serve.webapp import serve_app

        app = serve_app(db)
        has_bot_page = True
    except Exception:
        from arena.web.app import create_app

        app = create_app(db)
        has_bot_page = False
    server = Server(app)
    out: dict[str, Any] = {}
    try:
        pages = ["/api/ladder", "/ladder", "/bots/bot03/charts"] + (["/bots/bot03"] if has_bot_page else [])
        for path in pages:
            fetch(server.base + path)  # warm-up
            times = [fetch(server.base + path)[1] for _ in range(repeat)]
            out[path] = {"p50_ms": statistics.median(times) * 1000, "p95_ms": pct(times, 0.95) * 1000}
            print(
                f"  {path:<22} p50 {out[path]['p50_ms']:7.1f} ms   p95 {out[path]['p95_ms']:7.1f} ms",
                flush=True,
            )
        _, cold = fetch(server.base + "/leaderboard")
        _, warm = fetch(server.base + "/leaderboard")
        out["/leaderboard"] = {"cold_ms": cold * 1000, "warm_ms": warm * 1000}
        print(f"  /leaderboard           cold {cold * 1000:7.0f} ms   warm {warm * 1000:7.1f} ms", flush=True)
    finally:
        server.close()
        hub = getattr(app.state, "live_hub", None)
        if hub is not None:
            hub.close()
        db.close()
    return out


def _bots(db: Database, folder: Path, sample: str | None = None) -> list[str]:
    """Four bots: greedy, invader, random and a second greedy; or four copies of ``sample``."""
    names = [f"{sample}{i}" for i in range(1, 5)] if sample else ["greedy", "invader", "random", "greedy2"]
    folder.mkdir(exist_ok=True)
    for name in names:
        f = folder / f"{name}.py"
        f.write_text((BOTS / f"{name.rstrip('1234')}_bot.py").read_text() + f"# {name}\n")
        add_bot(db, name, f)
    return names


def _busy(db: Database, tid: int) -> float:
    """Seconds the workers spent in matches (each match from its start to its result)."""
    from sqlmodel import select

    from arena.store.models import Match

    with db.session() as session:
        spans = session.exec(
            select(Match.started_at, Match.finished_at).where(Match.tournament_id == tid)
        ).all()
    return sum((b - a).total_seconds() for a, b in spans if a is not None and b is not None)


def _decisions(db: Database, tid: int) -> int:
    """Decisions the bots made in the tournament's matches (games differ in length by seed)."""
    from sqlalchemy import func
    from sqlmodel import col, select

    from arena.store.models import Match, MatchSeat

    with db.session() as session:
        n = session.exec(
            select(func.sum(MatchSeat.decisions))
            .join(Match, col(Match.id) == col(MatchSeat.match_id))
            .where(Match.tournament_id == tid)
        ).one()
    return int(n or 0)


def throughput_once(work: Path, games: int, kind: str) -> dict[str, float]:
    """One cold run of a round robin or of the ladder: 4 equal bots, 2 workers, tables of 2."""
    import os

    from arena.ladder.service import LadderSettings, run_ladder
    from arena.referee.timecontrol import TimeControl
    from arena.store.tournaments import status_counts
    from arena.tournament.runner import run_tournament
    from arena.tournament.service import create

    home = Path(tempfile.mkdtemp(prefix=kind, dir=work))
    os.environ["ARENA_HOME"] = str(home)
    db = Database(f"sqlite:///{home / 'arena.db'}")
    names = _bots(db, home / "bots", "greedy")  # equal bots: every table takes as long
    t0 = time.perf_counter()
    if kind == "round-robin":
        t = create(
            db, names, fmt="round-robin", table_sizes=(2,), games=games, seed=3, move_time=1.0, bank=10.0
        )
        assert t.id is not None
        t0 = time.perf_counter()
        run_tournament(db, t.id, jobs=2)
        tid = t.id
    else:
        tables = 6 * games  # as many tables (of 2) as the round robin: C(4, 2) per game
        settings = LadderSettings(seed=3, table_sizes=(2,), control=TimeControl(1.0, 10.0), sandbox=None,
                                  max_tables=tables)  # fmt: skip
        tid = run_ladder(db, settings, jobs=2)
    elapsed = time.perf_counter() - t0
    done = status_counts(db, tid).get("finished", 0)
    out = {
        "matches_per_s": done / elapsed,
        "decisions_per_s": _decisions(db, tid) / elapsed,
        "busy": _busy(db, tid) / (2 * elapsed),
    }
    m, d, b = out["matches_per_s"], out["decisions_per_s"], out["busy"]
    print(f"  {kind:<12} {done} matches in {elapsed:5.1f} s: {m:5.2f} matches/s, {d:6.0f} decisions/s, "
          f"workers busy {b:.0%}", flush=True)  # fmt: skip
    db.close()
    return out


def throughput(work: Path, games: int, repeat: int) -> dict[str, float]:
    """Round robin and ladder, alternately ``repeat`` times each: the median of each ratio
    (ladder / round robin), so a machine whose load changes meanwhile counts less."""
    ratios: dict[str, list[float]] = {"matches_per_s": [], "decisions_per_s": [], "busy": []}
    if repeat > 1:  # an untimed warm-up pair: the first run of each pays one-time costs in this process
        print("  (warm-up, not counted)", flush=True)
        throughput_once(work, 1, "round-robin")
        throughput_once(work, 1, "ladder")
    for _ in range(repeat):
        rr = throughput_once(work, games, "round-robin")
        ladder = throughput_once(work, games, "ladder")
        for key in ratios:
            ratios[key].append(ladder[key] / rr[key])
    return {f"{key}_ratio": statistics.median(values) for key, values in ratios.items()}


def live_latency(work: Path, tables: int) -> dict[str, float]:
    """Steps of ladder matches watched over SSE: referee applied -> watcher read (seconds)."""
    import os

    from arena.ladder.service import LadderSettings, run_ladder
    from arena.referee.timecontrol import TimeControl
    from arena.web.app import create_app

    home = work / "live"
    home.mkdir()
    os.environ["ARENA_HOME"] = str(home)
    os.environ.pop("ARENA_LIVE_SOCKET", None)
    url = f"sqlite:///{home / 'arena.db'}"
    db = Database(url)
    _bots(db, home / "bots")
    app = create_app(db)
    server = Server(app)
    settings = LadderSettings(seed=5, table_sizes=(2,), control=TimeControl(1.0, 10.0), sandbox=None,
                              max_tables=tables)  # fmt: skip
    ladder = threading.Thread(target=run_ladder, args=(db, settings), kwargs={"jobs": 2}, daemon=True)
    ladder.start()
    lat: list[float] = []
    watched: set[int] = set()
    try:
        while ladder.is_alive() or not watched:
            with urllib.request.urlopen(server.base + "/api/ladder") as r:
                running = [m["match"] for m in json.loads(r.read())["running"] if m["match"] not in watched]
            if not running:
                if not ladder.is_alive():
                    break
                time.sleep(0.02)
                continue
            mid = running[0]
            watched.add(mid)
            event = None
            with urllib.request.urlopen(f"{server.base}/api/live/{mid}/events", timeout=120) as r:
                for raw in r:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "step":
                        now = time.time()
                        steps = json.loads(line[6:])["steps"]
                        if len(steps) < 20:  # a catch-up batch of earlier steps is not latency
                            lat += [now - s["ts"] for s in steps if s["ts"]]
                    elif event == "end":
                        break
        ladder.join(120)
    finally:
        server.close()
        if app.state.live_hub is not None:
            app.state.live_hub.close()
        db.close()
    out = {"steps": float(len(lat)), "matches": float(len(watched)),
           "p50_ms": pct(lat, 0.5) * 1000, "p95_ms": pct(lat, 0.95) * 1000}  # fmt: skip
    p50, p95 = out["p50_ms"], out["p95_ms"]
    print(f"  {len(lat)} steps of {len(watched)} matches: p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10,000 matches, short runs")
    ap.add_argument("--matches", type=int, default=None, help="stored matches for (a)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the seeded database in this folder")
    ap.add_argument("--skip-pages", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-live", action="store_true")
    args = ap.parse_args()
    n = args.matches or (10_000 if args.quick else 100_000)
    work = Path(tempfile.mkdtemp(prefix="arena-bench-ladder-"))
    summary: dict[str, Any] = {"matches": n}
    try:
        import os

        os.environ["ARENA_HOME"] = str(work)
        if not args.skip_pages:
            folder = args.keep or work / "pages"
            folder.mkdir(parents=True, exist_ok=True)
            print(f"(a) seeding {n:,} matches ...", flush=True)
            url, seeding = seed_database(folder / "arena.db", n)
            summary["seeding"] = seeding
            print("  " + ", ".join(f"{k} {v:.1f}" for k, v in seeding.items()), flush=True)
            summary["pages"] = time_pages(url)
        if not args.skip_throughput:
            print("(b) matches per second, 2 workers ...", flush=True)
            tp = summary["throughput"] = throughput(work, 1 if args.quick else 4, 1 if args.quick else 3)
            m, d, b = tp["matches_per_s_ratio"], tp["decisions_per_s_ratio"], tp["busy_ratio"]
            print(f"  ladder / round robin (medians): matches/s {m:.3f}, decisions/s {d:.3f}, ", end="")
            print(f"workers busy {b:.3f}")
        if not args.skip_live:
            print("(c) live latency ...", flush=True)
            summary["live"] = live_latency(work, 2 if args.quick else 6)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(summary, indent=1, default=float))


if __name__ == "__main__":
    main()
