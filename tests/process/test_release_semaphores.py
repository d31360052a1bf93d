"""``lifecycle.release_semaphores``: a process that leaves at once (a second Ctrl-C) first gives
back its worker pool's named semaphores, so nothing is left in /dev/shm and the standard library's
resource tracker has nothing to warn about (real processes, real semaphores)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import multiprocessing as mp, os, sys
from arena.lifecycle import release_semaphores
lock = mp.get_context("spawn").Lock()  # a named semaphore, on the resource tracker's list
print(lock._semlock.name, flush=True)
if sys.argv[1] == "release":
    print(release_semaphores(), flush=True)
os._exit(0)  # what exit_at_once does: no clean-up
"""


def _run(mode: str) -> tuple[list[str], str]:
    # the resource tracker inherits stderr, so run() also waits for it to report and end
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split(), proc.stderr


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="POSIX shared memory in /dev/shm (Linux)")
def test_released_semaphores_leave_nothing_behind_and_no_warning() -> None:
    out, err = _run("release")
    name, released = out
    assert int(released) >= 1
    assert not Path("/dev/shm", "sem." + name.lstrip("/")).exists()
    assert "leaked" not in err, err


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="POSIX shared memory in /dev/shm (Linux)")
def test_without_the_release_the_tracker_warns() -> None:
    """The control: the same process without the release gets the warning this module removes."""
    _, err = _run("keep")
    assert "leaked semaphore" in err, err
