"""Only the coordinator's PID is killed (SIGKILL: the OOM killer, ``kill -9``; SIGTERM: ``kill``,
a service manager) mid-tournament: every process of the run is gone within 5 s, and ``resume``
completes it to exactly the results of an uninterrupted run.  On SQLite with sandboxed bots,
on PostgreSQL with unsandboxed ones (``--no-sandbox``)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from store.helpers import match_rows, outcome, run_cli

from arena.store.db import Database

from .helpers import (
    TOTAL,
    create,
    descendants,
    kill_all,
    marked,
    reference,
    run_markers,
    start,
    survivors,
    wait_for_finished,
    wait_until,
)

DEADLINE = 5.0  # seconds after the kill by which no process of the run may be alive


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_only_the_coordinator_ends_the_whole_run(
    backend: str,
    db_url: str,
    new_db_url: Callable[[], str],
    arena_home: Path,
    tmp_path: Path,
    sig: signal.Signals,
) -> None:
    sandbox = backend == "sqlite"
    tid = create(db_url, arena_home, sandbox)
    run = start(arena_home, db_url, tmp_path / "start.log", "tournament", "start", str(tid), "--jobs", "2")
    tree = []
    try:
        wait_for_finished(run, db_url, tid)
        bots = str(arena_home / "artifacts")
        wait_until(lambda: bool(marked([bots])), 30, "bots running")
        tree = descendants(run.proc.pid)  # workers, bots (and sandboxes), the resource tracker
        markers = run_markers(arena_home)
        assert len(tree) >= 3, tree
        killed = time.monotonic()
        os.kill(run.proc.pid, sig)  # the coordinator alone
        code = run.wait(timeout=60)
        left = survivors(tree, markers, timeout=max(0.0, killed + DEADLINE - time.monotonic()))
        took = time.monotonic() - killed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.proc.pid, signal.SIGKILL)
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()
        kill_all([r.pid for r in tree])
    assert not left, f"{len(left)} processes of the run outlived its coordinator by {took:.1f} s: {left}"
    output = run.output()
    assert "Traceback" not in output, output

    db = Database(db_url)
    at_stop = match_rows(db, tid)
    db.close()
    status = {r["ordinal"]: r["status"] for r in at_stop}
    finished = {o for o, s in status.items() if s == "finished"}
    assert 3 <= len(finished) < TOTAL, status
    for r in at_stop:  # a match is wholly finished or not at all
        if r["status"] == "finished":
            assert r["replays"] == 1 and None not in r["scores"] and None not in r["placings"], r
        else:
            assert r["replays"] == 0 and set(r["scores"]) == {None}, r
    if sig == signal.SIGTERM:  # a clean stop: one line, the resume command, exit 143
        assert code == 143, output
        last = output.strip().splitlines()[-1]
        assert "stopped by SIGTERM" in last and f"'arena tournament resume {tid}'" in last, output
        assert "leaked" not in output, output
        assert set(status.values()) == {"finished", "queued"}, status  # nothing left running
    else:
        assert code == -signal.SIGKILL

    resumed = run_cli(arena_home, db_url, "tournament", "resume", str(tid), "--jobs", "2")
    assert f"matches: {TOTAL} finished" in resumed.stderr, resumed.stderr
    db = Database(db_url)
    after = match_rows(db, tid)
    db.close()
    before = {r["ordinal"]: r for r in at_stop}
    for r in after:
        assert r["status"] == "finished" and r["replays"] == 1, r
        if r["ordinal"] in finished:  # kept as it was: not played again
            assert r["attempts"] == 1 and r["replay_sha"] == before[r["ordinal"]]["replay_sha"], r

    ref_tid, ref_outcome, ref_ids = reference(backend, sandbox, new_db_url, arena_home)
    assert ref_tid == tid and ref_ids == [r["id"] for r in after]
    assert outcome(after) == ref_outcome
