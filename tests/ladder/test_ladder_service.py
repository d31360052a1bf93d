"""The ladder service (arena/ladder/service.py) with real worker processes and bots: killed
with kill -9 and restarted it loses and doubles nothing (SQLite and PostgreSQL); a bot that
forfeits every game and a worker that dies mid-match are handled; new bots join, removed ones
leave; the ratings are exactly the fold of the recorded results."""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from sqlmodel import col, select
from store.helpers import ARENA, arena_env, match_rows, processes_with, sample, status_counts_plain, wait_gone

from arena.ladder.field import active_versions, find_ladder
from arena.ladder.pull import tables_of
from arena.ladder.ratings import beliefs, fit_state, refit
from arena.ladder.service import LadderSettings, run_ladder
from arena.ratings.incremental import fold
from arena.referee.timecontrol import TimeControl
from arena.store.bots import add_bot, artifact_path, remove_bot
from arena.store.db import Database, arena_home
from arena.store.models import Bot, BotVersion, MatchSeat
from arena.store.models_ladder import LadderRatingHistory
from arena.store.tournaments import get_tournament
from arena.tournament.runfile import RunFile
from arena.tournament.runner import LocalExecutor, MatchExecutor, Progress

TABLES = 8  # tables of 2 and 3, cycled: 4 * 2 + 4 * 3 = 20 matches
TOTAL = 20


def _register(db: Database, names: tuple[str, ...], folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for name in names:
        path = folder / f"{name}.py"
        path.write_text(sample("greedy" if name[0] == "g" else "random").read_text() + f"# {name}\n")
        add_bot(db, name, path)


def _check_consistent(db: Database, tid: int, *, finished: int | None = None) -> list[dict[str, object]]:
    """Every finished match recorded once with a replay and rated once; nothing else rated; the
    stored ratings are the fold of the finished matches in the order they were rated."""
    rows = match_rows(db, tid)
    done = [r for r in rows if r["status"] == "finished"]
    if finished is not None:
        assert len(done) == finished == len(rows), [(r["ordinal"], r["status"]) for r in rows]
    for r in rows:
        assert (r["replays"] == 1) == (r["status"] == "finished"), r
    with db.session() as session:
        history = session.exec(
            select(LadderRatingHistory).where(LadderRatingHistory.tournament_id == tid).order_by(
                col(LadderRatingHistory.id))
        ).all()  # fmt: skip
        seats = {(s.match_id, s.bot_version_id): s.placing for s in session.exec(select(MatchSeat)).all()}
    rated: dict[int, list[int]] = {}
    for h in history:
        rated.setdefault(h.match_id, []).append(h.bot_version_id)
        assert seats[(h.match_id, h.bot_version_id)] == h.placing
    assert sorted(rated) == sorted(int(str(r["id"])) for r in done)  # each finished match rated, once
    by_id = {int(str(r["id"])): r for r in done}
    order = list(dict.fromkeys(h.match_id for h in history))
    expected = fold((by_id[m]["versions"], by_id[m]["placings"]) for m in order)  # type: ignore[misc]
    got = beliefs(db, tid)
    assert set(got) == set(expected)
    for vid, b in expected.items():
        assert abs(got[vid].mu - b.mu) < 1e-9 and abs(got[vid].sigma - b.sigma) < 1e-9
        assert got[vid].games == b.games
    return rows


def _tables_left(url: str) -> int:
    """Of the TABLES the test plays, how many the ladder has not handed out yet (--max-tables is
    a limit of one run: each run is given what is left)."""
    if not _has_ladder(url):
        return TABLES
    db = Database(url)
    try:
        return TABLES - tables_of(db, 1)
    finally:
        db.close()


def _kill_at(url: str, home: Path, target: int, delay: float, log: Path) -> None:
    with log.open("a") as out:
        proc = subprocess.Popen(
            [str(ARENA), "ladder", "run", "--jobs", "2", "--tables", "2,3",
             "--max-tables", str(_tables_left(url)), "--seed", "5", "--move-time", "2", "--bank", "20",
             "--no-sandbox"],
            env=arena_env(home, url), cwd=home, stdout=out, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while True:
                counts = status_counts_plain(url, 1) if _has_ladder(url) else {}
                if counts.get("finished", 0) >= target:
                    break
                assert proc.poll() is None, f"the ladder ended early: {log.read_text()}"
                assert time.monotonic() < deadline, "no progress within 120 s"
                time.sleep(0.02)
            time.sleep(delay)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    left = wait_gone(str(home / "artifacts"), timeout=10.0)
    assert not left, f"bot processes outlived the killed ladder: {left}"


def _has_ladder(url: str) -> bool:
    try:
        return bool(status_counts_plain(url, 1))
    except Exception:
        return False


def test_ladder_kill_9_and_resume(backend: str, db_url: str, arena_home: Path, tmp_path: Path) -> None:
    db = Database(db_url)
    _register(db, ("g1", "g2", "r1", "r2"), tmp_path / "bots")
    db.close()
    rng = random.Random(f"ladder-{backend}")
    log = tmp_path / "runs.log"
    for target in sorted(rng.sample(range(2, TOTAL - 4), 2)):
        _kill_at(db_url, arena_home, target, rng.uniform(0.0, 0.5), log)
        db = Database(db_url)
        _check_consistent(db, 1)  # after kill -9: what is finished is rated exactly once
        db.close()
    assert processes_with(str(arena_home / "artifacts")) == {}
    done = subprocess.run(
        [str(ARENA), "ladder", "run", "--jobs", "2", "--no-sandbox", "--max-tables",
         str(_tables_left(db_url))],
        env=arena_env(arena_home, db_url), cwd=arena_home, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    db = Database(db_url)
    rows = _check_consistent(db, 1, finished=TOTAL)
    assert sorted({str(r["group"]) for r in rows}) == sorted(f"L{g}" for g in range(TABLES))
    assert [len(r["versions"]) for r in rows] == [2, 2, 3, 3, 3] * 4  # type: ignore[arg-type]
    assert max(int(str(r["attempts"])) for r in rows) >= 1
    db.close()


def test_forfeiting_bot_and_a_worker_killed_mid_match(sqlite_db: Database, tmp_path: Path) -> None:
    """A bot that crashes at once forfeits every match it is seated in: recorded, rated last,
    still seated (the fairness floor); a worker killed mid-match costs only a replay of that
    match.  Later, a bot registered while the ladder runs joins it, a removed one leaves."""
    db = sqlite_db
    _register(db, ("g1", "r1", "r2"), tmp_path / "bots")
    crash = tmp_path / "bots" / "crasher.py"
    crash.write_text("import sys\nsys.exit(3)\n")
    add_bot(db, "crasher", crash)
    made: list[LocalExecutor] = []
    killed: list[int] = []

    def executor(tid: int, run: RunFile) -> MatchExecutor:
        ex = LocalExecutor(2, arena_home() / "logs", None, run)
        made.append(ex)
        return ex

    def kill() -> None:
        pid = made[0].workers[0].pid
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    def progress(p: Progress) -> None:
        if p.done == 3 and not killed:  # soon both workers are busy again: kill one mid-match
            threading.Timer(0.4, kill).start()

    settings = LadderSettings(seed=3, table_sizes=(2, 3), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=8)  # fmt: skip
    tid = run_ladder(db, settings, jobs=2, executor=executor, progress=progress, refit_every=0.5)
    assert killed
    rows = _check_consistent(db, tid, finished=TOTAL)
    assert any(int(str(r["attempts"])) == 2 for r in rows), "the killed worker's match was played again"
    seated = [r for r in rows if "crasher" in r["bots"]]  # type: ignore[operator]
    assert len(seated) >= 3
    for r in seated:
        seat = list(r["bots"]).index("crasher")  # type: ignore[call-overload]
        assert r["seat_terminations"][seat] not in (None, "", "normal"), r  # type: ignore[index]
    b = beliefs(db, tid)
    ladder = find_ladder(db)
    assert ladder is not None
    crasher = next(r["versions"][list(r["bots"]).index("crasher")] for r in seated)  # type: ignore[index,call-overload]
    assert min(b, key=lambda v: b[v].mu) == crasher

    # the cached fit: refitted in the background (a process of its own) while the ladder ran,
    # stale until refitted, then current; a new result makes it stale again
    assert fit_state(db, tid).matches > 0
    state = refit(db, tid)
    assert state.fresh and set(state.ratings) == set(b)
    # a new bot joins, a removed one leaves: 4 more tables (--max-tables is this run's limit;
    # the ladder keeps its stored settings: unsandboxed, tables of 2 and 3)
    add_bot(db, "g2", _copy(tmp_path, "g2"))
    remove_bot(db, "r2")
    assert get_tournament(db, tid).status == "running"  # a run's limit never ends the ladder
    run_ladder(db, LadderSettings(max_tables=4), jobs=2, refit_every=60)
    rows = _check_consistent(db, tid, finished=TOTAL + 10)
    later = [r for r in rows if int(str(r["ordinal"])) >= TOTAL]
    assert any("g2" in r["bots"] for r in later)  # type: ignore[operator]
    assert not any("r2" in r["bots"] for r in later)  # type: ignore[operator]
    assert not fit_state(db, tid).fresh


def _copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "bots" / f"{name}.py"
    path.write_text(sample("greedy").read_text() + f"# {name}\n")
    return path


def test_ladder_show(sqlite_url: str, arena_home: Path, tmp_path: Path) -> None:
    """'arena ladder show': no ladder yet is exit 1 with what to do; then the standings, ranked
    by mu - 3 sigma with the provisional bots marked."""
    from store.helpers import cli_inproc

    db = Database(sqlite_url)
    out = cli_inproc(arena_home, sqlite_url, "ladder", "show", code=1)
    assert "no ladder yet" in out.stderr and "arena ladder run" in out.stderr
    _register(db, ("g1", "r1"), tmp_path / "bots")
    settings = LadderSettings(seed=2, table_sizes=(2,), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=2)  # fmt: skip
    run_ladder(db, settings, jobs=2)
    db.close()
    head, *shown = cli_inproc(
        arena_home, sqlite_url, "ladder", "show", "--min-games", "3"
    ).stdout.splitlines()
    assert head.split()[:3] == ["#", "bot", "mu-3sigma"], head  # the number ranked by is labelled
    assert "fewer than 3 games: provisional" in head
    assert [line.split()[1] for line in shown] == ["g1", "r1"] or [line.split()[1] for line in shown] == [
        "r1",
        "g1",
    ]
    assert all(" 4 games" in line for line in shown) and shown[0].split()[0] == "1"
    provisional = cli_inproc(arena_home, sqlite_url, "ladder", "show").stdout
    assert provisional.count("(provisional)") == 2


def test_a_bot_whose_stored_file_is_gone_is_not_seated(
    sqlite_db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A ladder bot whose stored file was deleted (artifacts/ cleaned), or damaged, is left out of
    the ladder's tables, logged once with how to bring it back, instead of crashing every game it is given; a
    sample bot's stored file is put back from the sample.  Real ladder run, real bot processes."""
    db = sqlite_db
    _register(db, ("g1", "r1"), tmp_path / "bots")
    add_bot(db, "gone", _copy(tmp_path, "gone"))
    add_bot(db, "broken", _copy(tmp_path, "broken"))
    add_bot(db, "greedy", sample("greedy"))
    with db.session() as session:
        versions = {
            name: v
            for v, name in session.exec(
                select(BotVersion, Bot.name).join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            )
        }
    artifact_path(versions["gone"]).unlink()
    artifact_path(versions["broken"]).write_text("")  # there, but not the registered bytes
    artifact_path(versions["greedy"]).unlink()
    caplog.set_level(logging.WARNING, logger="arena.ladder.field")
    active = active_versions(db)
    assert versions["gone"].id not in active and versions["broken"].id not in active
    assert versions["greedy"].id in active and artifact_path(versions["greedy"]).is_file()  # put back
    assert active_versions(db) == active
    told = [r.getMessage() for r in caplog.records if "gone" in r.getMessage()]
    assert len(told) == 1 and "arena bots add gone FILE" in told[0], told  # once per process
    settings = LadderSettings(seed=5, table_sizes=(2, 3), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=4)  # fmt: skip
    tid = run_ladder(db, settings, jobs=2, refit_every=60)
    rows = _check_consistent(db, tid, finished=10)
    assert not any("gone" in r["bots"] or "broken" in r["bots"] for r in rows)  # type: ignore[operator]
    assert all(t in (None, "", "normal") for r in rows for t in r["seat_terminations"])  # type: ignore[attr-defined]
