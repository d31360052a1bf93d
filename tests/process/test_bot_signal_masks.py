"""Bots start with SIGINT, SIGTERM and SIGHUP neither blocked nor ignored, however the tournament
runs them (a local pool, a local Dask cluster; sandboxed or not): the pool's workers are spawned
with SIGINT blocked until their handler is in place, and the thread that starts the bots used to
keep that mask, so every bot inherited it (found by an outside review)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from .helpers import create, descendants, kill_all, start

STOP = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _masks(pid: int) -> tuple[int, int] | None:
    """``(SigBlk, SigIgn)`` of a live process, or None once it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    fields = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    return int(fields["SigBlk"], 16), int(fields["SigIgn"], 16)


def _bots(root: int) -> dict[int, str]:
    """The bot programs under ``root`` (not their sandbox or guard): pid -> command line."""
    found = {}
    for ref in descendants(root):
        with contextlib.suppress(OSError):
            line = Path(f"/proc/{ref.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            if "_bot.py" in line and "bwrap" not in line and "guard" not in line:
                found[ref.pid] = line
    return found


@pytest.mark.parametrize(
    ("executor", "sandbox"),
    [(("--jobs", "2"), True), (("--jobs", "2"), False), (("--local-cluster", "2"), True)],
    ids=["jobs-sandboxed", "jobs-unsandboxed", "local-cluster-sandboxed"],
)
def test_bots_start_with_the_stop_signals_deliverable(
    sqlite_url: str, arena_home: Path, tmp_path: Path, executor: tuple[str, str], sandbox: bool
) -> None:
    tid = create(sqlite_url, arena_home, sandbox=sandbox)
    run = start(arena_home, sqlite_url, tmp_path / "run.log", "tournament", "start", str(tid), *executor)
    seen: dict[int, tuple[str, int, int]] = {}
    try:
        deadline = time.monotonic() + 120
        while len(seen) < 4:
            assert run.proc.poll() is None and time.monotonic() < deadline, (seen, run.output())
            for pid, line in _bots(run.proc.pid).items():
                masks = _masks(pid)
                if masks is not None and pid not in seen:
                    seen[pid] = (line, *masks)
            time.sleep(0.02)
    finally:
        tree = [r.pid for r in descendants(run.proc.pid)]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.proc.pid, signal.SIGKILL)
        run.proc.wait()
        kill_all(tree)
    wanted = sum(1 << (int(s) - 1) for s in STOP)
    for pid, (line, blocked, ignored) in seen.items():
        assert blocked & wanted == 0, f"bot {pid} ({line}) has SigBlk {blocked:#x}"
        assert ignored & wanted == 0, f"bot {pid} ({line}) has SigIgn {ignored:#x}"
