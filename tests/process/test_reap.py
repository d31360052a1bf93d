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
from collections.abc import Callable
from pathlib import Path

from store.helpers import run_cli

from .helpers import (
    ProcessRef,
    create,
    descendants,
    kill_all,
    marked,
    run_markers,
    start,
    status_counts_plain,
    survivors,
    wait_for_finished,
    wait_until,
)

GAMES = 5  # 30 matches (not 18): more time in which a worker has a bot to freeze, under load


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _freeze_a_worker_with_a_bot(
    workers: list[ProcessRef], run_marker: list[str], state: Callable[[], str]
) -> ProcessRef:
    """SIGSTOP a worker and everything under it while a bot of the run (``ARENA_RUN`` in its
    environment) runs there, so that something marked is left when the coordinator dies.

    Between two matches a worker has no bot, so freeze, look, and thaw to try again until one
    has (on a loaded machine the moment matters).  The bots are frozen too: a bot whose match
    has just ended exits by itself, frozen worker or not, and then nothing marked is left
    (the failure of one clean-clone run)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for w in workers:
            if not descendants(w.pid):
                continue
            os.kill(w.pid, signal.SIGSTOP)
            frozen = [w.pid, *(r.pid for r in descendants(w.pid))]
            _signal_all(frozen[1:], signal.SIGSTOP)
            time.sleep(0.2)  # one already exiting is a zombie by now, not counted below
            if set(marked(run_marker)) & set(frozen):  # read after the stop: a bot still there
                return w
            _signal_all(frozen, signal.SIGCONT)
        time.sleep(0.05)
    raise AssertionError(f"no worker had a marked bot to freeze within 60 s; {state()}")


def test_resume_reaps_a_dead_runs_leftovers(sqlite_url: str, arena_home: Path, tmp_path: Path) -> None:
    tid = create(sqlite_url, arena_home, sandbox=False, games=GAMES)
    run = start(
        arena_home, sqlite_url, tmp_path / "start.log", "tournament", "start", str(tid), "--jobs", "2"
    )
    tree = []
    try:
        wait_for_finished(run, sqlite_url, tid)
        bots = str(arena_home / "artifacts")

        def state() -> str:  # where the run was: ended, or between matches
            return (f"run exit {run.proc.poll()}, matches {status_counts_plain(sqlite_url, tid)}; "
                    f"its log ends: {run.output()[-2000:]}")  # fmt: skip

        try:
            wait_until(lambda: bool(marked([bots])), 30, "bots running")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; {state()}") from exc
        workers = [r for r in descendants(run.proc.pid) if "spawn_main" in _cmdline(r.pid)]
        assert len(workers) == 2, workers
        markers = run_markers(arena_home)
        assert any(m.startswith("ARENA_RUN=") for m in markers), markers  # the run file names it
        run_marker = [m for m in markers if m.startswith("ARENA_RUN=")]
        frozen = _freeze_a_worker_with_a_bot(workers, run_marker, state)
        tree = descendants(run.proc.pid)
        os.kill(run.proc.pid, signal.SIGKILL)
        run.wait(timeout=30)
        time.sleep(2.0)
        left = {r.pid for r in tree if r.alive()}
        assert frozen.pid in left, "the frozen worker died by itself: nothing left to test"
        assert marked([m for m in markers if m.startswith("ARENA_RUN=")]), "no marked process left"

        resumed = run_cli(arena_home, sqlite_url, "tournament", "resume", str(tid), "--jobs", "2")
        assert f"matches: {6 * GAMES} finished" in resumed.stderr, resumed.stderr
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
