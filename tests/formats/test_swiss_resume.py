"""A Swiss tournament of 8 bots at 4-player tables, killed with kill -9 at random moments and
resumed, ends with exactly the results of an uninterrupted run (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlmodel import col, select
from store.helpers import (
    ARENA,
    arena_env,
    match_rows,
    outcome,
    processes_with,
    run_cli,
    sample,
    status_counts_plain,
    wait_gone,
)

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match, TournamentBye
from arena.tournament.runner import run_tournament

SEED = 7
BOTS = ("g1", "g2", "g3", "g4", "r1", "r2", "r3", "r4")
TOTAL = 3 * 2 * 4  # ceil(log2(8)) rounds x 2 tables x 4 seat rotations


def _register(url: str, folder: Path) -> None:
    """Four greedy and four random bots, each a distinct version (a comment appended)."""
    folder.mkdir(exist_ok=True)
    db = Database(url)
    for name in BOTS:
        path = folder / f"{name}.py"
        body = sample("greedy" if name[0] == "g" else "random").read_text(encoding="utf-8")
        path.write_text(body + f"# {name}\n", encoding="utf-8")
        add_bot(db, name, path)
    db.close()


def _create(url: str, home: Path, folder: Path) -> int:
    _register(url, folder)
    made = run_cli(
        home, url, "tournament", "create", *BOTS, "--format", "swiss", "--tables", "4", "--games", "1",
        "--seed", str(SEED), "--move-time", "2", "--bank", "20", "--no-sandbox",
    )  # fmt: skip
    assert "8 matches" in made.stderr  # round 1 only: the later rounds depend on its results
    return int(made.stdout.strip())


def _kill_at(url: str, home: Path, tid: int, target: int, delay: float, log: Path) -> dict[int, str]:
    """Start (or resume) the run, wait until ``target`` matches are finished and ``delay`` more
    seconds, kill -9 the coordinator and its workers; return the statuses by ordinal."""
    with log.open("a") as out:
        proc = subprocess.Popen(
            [str(ARENA), "tournament", "resume", str(tid), "--jobs", "2"],
            env=arena_env(home, url), cwd=home, stdout=out, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while status_counts_plain(url, tid).get("finished", 0) < target:
                assert proc.poll() is None, f"the run ended early: {log.read_text()}"
                assert time.monotonic() < deadline, "no progress within 120 s"
                time.sleep(0.02)
            time.sleep(delay)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    left = wait_gone(str(home / "artifacts"), timeout=10.0)
    assert not left, f"bot processes outlived the killed run: {left}"
    db = Database(url)
    rows = match_rows(db, tid)
    db.close()
    for r in rows:  # a match is wholly finished or not at all
        assert r["status"] in ("finished", "running", "queued"), r
        assert (r["replays"] == 1) == (r["status"] == "finished"), r
    return {r["ordinal"]: r["status"] for r in rows}


def _byes(db: Database, tid: int) -> list[tuple[int, int, float]]:
    with db.session() as session:
        rows = session.exec(select(TournamentBye).where(TournamentBye.tournament_id == tid)).all()
        return sorted((b.round, b.bot_version_id, b.points) for b in rows)


def _busy_within_rounds(db: Database, tid: int) -> None:
    """With --jobs 2 two matches of a round are in flight together (the pull loop keeps both
    workers busy): in every round, some match starts before another one has finished."""
    with db.session() as session:
        matches = session.exec(
            select(Match).where(Match.tournament_id == tid).order_by(col(Match.ordinal))
        ).all()
    for rnd in (1, 2, 3):
        spans: list[tuple[datetime, datetime]] = [
            (m.started_at, m.finished_at)
            for m in matches
            if m.round == rnd and m.started_at and m.finished_at
        ]
        assert len(spans) == 8
        assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1 :]), rnd


def test_swiss_kill_and_resume(
    backend: str, db_url: str, new_db_url: Callable[[], str], arena_home: Path, tmp_path: Path
) -> None:
    rng = random.Random(f"swiss-{backend}")
    tid = _create(db_url, arena_home, tmp_path / "bots")
    # random moments, one of them right at a round's end (when the next round is being made)
    targets = sorted({8, *rng.sample(range(2, TOTAL - 2), 2)})
    log = tmp_path / "runs.log"
    for target in targets:
        status = _kill_at(db_url, arena_home, tid, target, rng.uniform(0.0, 0.6), log)
        assert len(status) in (8, 16, 24), status  # whole rounds are stored, never part of one
        assert len(status) < TOTAL or any(s != "finished" for s in status.values()), "killed too late"
    assert processes_with(str(arena_home / "artifacts")) == {}

    resumed = run_cli(arena_home, db_url, "tournament", "resume", str(tid), "--jobs", "2")
    assert f"matches: {TOTAL} finished" in resumed.stderr
    db = Database(db_url)
    after = match_rows(db, tid)
    byes_after = _byes(db, tid)
    db.close()
    assert len(after) == TOTAL and all(r["status"] == "finished" and r["replays"] == 1 for r in after)

    # the same tournament, uninterrupted, in a fresh database (the same ids, so the same bots' seeds)
    other_url = new_db_url()
    assert _create(other_url, arena_home, tmp_path / "bots2") == tid
    other = Database(other_url)
    run_tournament(other, tid, jobs=2)
    reference = match_rows(other, tid)
    byes_reference = _byes(other, tid)
    _busy_within_rounds(other, tid)
    other.close()
    assert [r["id"] for r in reference] == [r["id"] for r in after]
    assert outcome(after) == outcome(reference)
    assert byes_after == byes_reference
    assert all(r["attempts"] == 1 for r in reference)

    shown = run_cli(arena_home, db_url, "tournament", "show", str(tid))
    assert "head to head" in shown.stdout
