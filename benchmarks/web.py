"""Web latency with a big database: the matches list page and /api/matches over 10,000 matches.

Usage: .venv/bin/python benchmarks/web.py [--matches N] [--requests R]

Fills a fresh SQLite database (in a temporary folder) with N finished matches through the real
tables in bulk (two to four seats each, bots, tournaments; the replay blobs are a few real game
records played by the engine, reused), serves the web app on 127.0.0.1 with uvicorn, and prints
the p50 / p90 / max latency over R requests of: the matches page (first page, a deep page, a
bot filter) and /api/matches (first page, a deep page), plus one replay page.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert
from sqlmodel import select

from arena.engine import make_policy, play_game
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat, Replay, Tournament, TournamentEntry
from arena.store.tournaments import compress_replay

BOTS = ("greedy", "invader", "search", "random", "alpha", "beta")
PER_TOURNAMENT = 1000


def fill(db: Database, n: int, *, seed: int = 1) -> dict[str, int]:
    """Insert ``n`` finished matches (with seats and replays) in bulk; returns some ids to ask for."""
    rng = random.Random(seed)
    records = {}
    for players in (2, 3, 4):
        game = play_game(players * 7 + 1, [make_policy("greedy", 1, s) for s in range(players)])
        blob, digest = compress_replay(game.record)
        records[players] = (
            blob,
            digest,
            len(game.record),
            list(game.outcome.scores),
            list(game.outcome.placings),
        )
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with db.session() as session:
        conn = session.connection()
        conn.execute(insert(Bot), [{"name": b, "created_at": start} for b in BOTS])
        bot_ids = dict(session.exec(select(Bot.name, Bot.id)).all())
        conn.execute(
            insert(BotVersion),
            [
                {
                    "bot_id": bot_ids[b],
                    "version": 1,
                    "sha256": f"{i:064x}",
                    "filename": f"{b}.py",
                    "artifact": "",
                    "command": "[]",
                    "created_at": start,
                }
                for i, b in enumerate(BOTS)
            ],
        )
        versions = list(session.exec(select(BotVersion.id)).all())
        n_tournaments = -(-n // PER_TOURNAMENT)
        conn.execute(
            insert(Tournament),
            [
                {
                    "name": f"bulk {t + 1}",
                    "format": "round-robin",
                    "table_sizes": "2,3,4",
                    "games": 10,
                    "seed": t,
                    "move_time": 1.0,
                    "bank": 10.0,
                    "status": "finished",
                    "config": "{}",
                    "created_at": start + timedelta(days=t),
                    "finished_at": start + timedelta(days=t + 1),
                }
                for t in range(n_tournaments)
            ],
        )
        conn.execute(
            insert(TournamentEntry),
            [
                {"tournament_id": t + 1, "bot_version_id": v, "role": "field"}
                for t in range(n_tournaments)
                for v in versions
            ],
        )
        matches, seats, replays = [], [], []
        for i in range(n):
            mid = i + 1
            players = rng.choice((2, 3, 4))
            blob, digest, size, scores, placings = records[players]
            finished = start + timedelta(minutes=7 * i)
            matches.append(
                {
                    "id": mid,
                    "tournament_id": i // PER_TOURNAMENT + 1,
                    "ordinal": i % PER_TOURNAMENT,
                    "seed": rng.randrange(2**62),
                    "group_key": f"{players}p-g{i // 10}",
                    "status": "finished",
                    "termination": "normal",
                    "attempts": 1,
                    "created_at": finished - timedelta(seconds=5),
                    "started_at": finished - timedelta(seconds=2),
                    "finished_at": finished,
                    "duration": 2.0,
                }
            )
            for s, v in enumerate(rng.sample(versions, players)):
                seats.append(
                    {
                        "match_id": mid,
                        "seat": s,
                        "bot_version_id": v,
                        "score": scores[s],
                        "placing": placings[s],
                        "termination": "normal",
                        "think_total": 0.5,
                        "think_max": 0.01,
                        "decisions": 150,
                    }
                )
            replays.append({"match_id": mid, "sha256": digest, "size": size, "data": blob})
        for table, rows in ((Match, matches), (MatchSeat, seats), (Replay, replays)):
            for k in range(0, len(rows), 2000):
                conn.execute(insert(table), rows[k : k + 2000])
    return {"last_page": -(-n // 50), "some_match": n // 2}


def timed(url: str, requests: int) -> list[float]:
    out = []
    for _ in range(requests):
        t0 = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as r:
            r.read()
            assert r.status == 200, (url, r.status)
        out.append(time.perf_counter() - t0)
    return out


def measure(base: str, ids: dict[str, int], requests: int) -> dict[str, list[float]]:
    """Latencies (seconds) of each probe; the first request of each is a warm-up, not counted."""
    probes = {
        "matches page 1": "/matches",
        f"matches page {ids['last_page']} (last)": f"/matches?page={ids['last_page']}",
        "matches ?bot=search": "/matches?bot=search",
        "matches ?tournament=3&termination=normal": "/matches?tournament=3&termination=normal",
        "/api/matches": "/api/matches",
        f"/api/matches?page={ids['last_page']}": f"/api/matches?page={ids['last_page']}",
        "/api/matches?bot=alpha&per_page=100": "/api/matches?bot=alpha&per_page=100",
        "replay viewer page": f"/matches/{ids['some_match']}",
    }
    out = {}
    for name, path in probes.items():
        timed(base + path, 1)
        out[name] = timed(base + path, requests)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000, help="matches in the database")
    parser.add_argument("--requests", type=int, default=20, help="timed requests per probe")
    args = parser.parse_args()
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'arena.db'}")
        t0 = time.perf_counter()
        ids = fill(db, args.matches)
        print(f"filled {args.matches} matches in {time.perf_counter() - t0:.1f} s")
        with BackgroundServer(create_app(db)) as base:
            results = measure(base, ids, args.requests)
        db.close()
    print(f"{'request':<46} {'p50 ms':>8} {'p90 ms':>8} {'max ms':>8}")
    for name, xs in results.items():
        xs.sort()
        p90 = xs[max(0, int(len(xs) * 0.9) - 1)]
        print(f"{name:<46} {statistics.median(xs) * 1000:>8.1f} {p90 * 1000:>8.1f} {xs[-1] * 1000:>8.1f}")
    worst = max(statistics.median(xs) for name, xs in results.items() if "replay" not in name)
    print(f"slowest list p50: {worst * 1000:.1f} ms over {args.matches} matches")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
