"""``resume`` reaps what a dead run left behind.  Normally nothing is left (workers die with
their coordinator), so the test makes a worker that cannot react: it is frozen (SIGSTOP) when
its coordinator is killed.  The frozen worker, its unsandboxed bots (found by the run's
``ARENA_RUN`` marker) and the resource tracker it keeps alive are stopped by the next
``resume``, which then completes the tournament."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from store.helpers import run_cli

from .helpers import (
    TOTAL,
    create,
    descendants,
    kill_all,
    marked,
    run_markers,
    start,
    survivors,
    wait_for_finished,
    wait_until,
)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_resume_reaps_a_dead_runs_leftovers(sqlite_url: str, arena_home: Path, tmp_path: Path) -> None:
    tid = create(sqlite_url, arena_home, sandbox=False)
    run = start(
        arena_home, sqlite_url, tmp_path / "start.log", "tournament", "start", str(tid), "--jobs", "2"
    )
    tree = []
    try:
        wait_for_finished(run, sqlite_url, tid)
        bots = str(arena_home / "artifacts")
        wait_until(lambda: bool(marked([bots])), 30, "bots running")
        workers = [r for r in descendants(run.proc.pid) if "spawn_main" in _cmdline(r.pid)]
        assert len(workers) == 2, workers
        busy = [w for w in workers if descendants(w.pid)] or workers
        frozen = busy[0]
        os.kill(frozen.pid, signal.SIGSTOP)
        tree = descendants(run.proc.pid)
        markers = run_markers(arena_home)
        assert any(m.startswith("ARENA_RUN=") for m in markers), markers  # the run file names it
        os.kill(run.proc.pid, signal.SIGKILL)
        run.wait(timeout=30)
        time.sleep(2.0)
        left = {r.pid for r in tree if r.alive()}
        assert frozen.pid in left, "the frozen worker died by itself: nothing left to test"
        assert marked([m for m in markers if m.startswith("ARENA_RUN=")]), "no marked process left"

        resumed = run_cli(arena_home, sqlite_url, "tournament", "resume", str(tid), "--jobs", "2")
        assert f"matches: {TOTAL} finished" in resumed.stderr, resumed.stderr
        assert "left by a dead run of tournament" in resumed.stderr, resumed.stderr
        still = survivors(tree, markers, timeout=1.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.proc.pid, signal.SIGKILL)
        for r in tree:
            with contextlib.suppress(ProcessLookupError):
                os.kill(r.pid, signal.SIGCONT)
        kill_all([r.pid for r in tree if r.alive()])
    assert not still, f"the dead run's processes outlived the resume: {still}"
    assert not list((arena_home / "runs").glob("*.json")), "the run files were not removed"
