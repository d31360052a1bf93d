"""Kill -9 in the middle of a tournament, resume it, and get exactly the uninterrupted results."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.tournament.runner import run_tournament

from .helpers import (
    ARENA,
    SAMPLES,
    arena_env,
    match_rows,
    outcome,
    processes_with,
    run_cli,
    sample,
    status_counts_plain,
    wait_gone,
)

SEED = 5
GAMES = 3  # 3 tables of 2 x 2 rotations x 3 seeds = 18 matches
TOTAL = 18


def _create(url: str, home: Path, sandbox: bool) -> int:
    """Register the sample bots and create the tournament with the CLI; return its id."""
    db = Database(url)
    for name in SAMPLES:
        add_bot(db, name, sample(name))
    db.close()
    made = run_cli(
        home, url, "tournament", "create", *SAMPLES, "--tables", "2", "--games", str(GAMES),
        "--seed", str(SEED), "--move-time", "2", "--bank", "20", *([] if sandbox else ["--no-sandbox"]),
    )  # fmt: skip
    assert f"{TOTAL} matches" in made.stderr
    assert ("bots sandboxed" if sandbox else "bots NOT sandboxed") in made.stderr
    return int(made.stdout.strip())


def _wait_for_progress(proc: subprocess.Popen[str], url: str, tid: int) -> dict[str, int]:
    """Poll until a few (not all) matches are finished; the run must still be going."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        counts = status_counts_plain(url, tid)
        if counts.get("finished", 0) >= 3:
            return counts
        assert proc.poll() is None, f"the run ended early (exit {proc.returncode}) with {counts}"
        time.sleep(0.05)
    raise AssertionError(f"no progress within 120 s: {status_counts_plain(url, tid)}")


def test_kill_and_resume(
    backend: str, db_url: str, new_db_url: Callable[[], str], arena_home: Path, tmp_path: Path
) -> None:
    """On SQLite the bots run sandboxed (the default; bubblewrap dies with its worker); on
    PostgreSQL unsandboxed (--no-sandbox), where orphaned bots must notice by themselves that
    their referee is gone."""
    sandbox = backend == "sqlite"
    tid = _create(db_url, arena_home, sandbox)

    log = (tmp_path / "start.log").open("w")
    proc = subprocess.Popen(
        [str(ARENA), "tournament", "start", str(tid), "--jobs", "2"],
        env=arena_env(arena_home, db_url),
        cwd=arena_home,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    marker = str(arena_home / "artifacts")
    try:
        _wait_for_progress(proc, db_url, tid)
        assert processes_with(marker), "no bot process was running mid-tournament"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its workers, at once
        proc.wait(timeout=30)
        log.close()
    left = wait_gone(marker, timeout=5.0)
    assert not left, f"bot processes outlived the killed tournament by 5 s: {left}"

    db = Database(db_url)
    at_kill = match_rows(db, tid)
    db.close()
    status = {r["ordinal"]: r["status"] for r in at_kill}
    finished = {o for o, s in status.items() if s == "finished"}
    running = {o for o, s in status.items() if s == "running"}
    queued = {o for o, s in status.items() if s == "queued"}
    assert len(at_kill) == TOTAL and 3 <= len(finished) < TOTAL, status
    assert running, f"no match was in flight when the run was killed: {status}"
    assert finished | running | queued == set(status)  # nothing failed
    for r in at_kill:  # a match is wholly finished or not at all
        if r["status"] == "finished":
            assert r["replays"] == 1 and None not in r["scores"] and None not in r["placings"], r
        else:
            assert r["replays"] == 0 and set(r["scores"]) == {None} and set(r["placings"]) == {None}, r

    resumed = run_cli(arena_home, db_url, "tournament", "resume", str(tid), "--jobs", "2")
    assert f"matches: {TOTAL} finished" in resumed.stderr
    assert "greedy" in resumed.stdout and "random" in resumed.stdout  # the final standings

    db = Database(db_url)
    after = match_rows(db, tid)
    db.close()
    assert all(r["status"] == "finished" and r["replays"] == 1 for r in after), after
    assert all(None not in r["scores"] and None not in r["placings"] for r in after)
    before = {r["ordinal"]: r for r in at_kill}
    for r in after:
        o = r["ordinal"]
        if o in finished:  # kept as it was: not played again
            assert r["attempts"] == 1 and r["replay_sha"] == before[o]["replay_sha"], r
            assert r["scores"] == before[o]["scores"]
        elif o in running:  # started, lost with the coordinator, played again
            assert r["attempts"] == 2, r
        else:
            assert r["attempts"] == 1, r

    # the same tournament, uninterrupted, in a fresh database (so that the match ids, from which
    # the random bot seeds itself, are the same too)
    other_url = new_db_url()
    assert _create(other_url, arena_home, sandbox) == tid
    other = Database(other_url)
    run_tournament(other, tid, jobs=2)
    reference = match_rows(other, tid)
    other.close()
    assert [r["id"] for r in reference] == [r["id"] for r in after]
    assert outcome(after) == outcome(reference)
    assert all(r["attempts"] == 1 for r in reference)
