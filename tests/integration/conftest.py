"""Integration-test fixtures: every test must leave no bot process behind."""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from collections.abc import Iterator

import pytest

from .helpers import child_pids

PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(scope="session", autouse=True)
def adopt_orphans() -> Iterator[None]:
    """Make the test process the subreaper of everything it starts: a bot orphaned by its
    launcher (the ``arena`` command, bubblewrap, a shell) is re-parented here instead of to
    init, where :func:`no_surviving_children` sees it."""
    libc = ctypes.CDLL(None, use_errno=True)
    ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    if ok:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture(autouse=True)
def no_surviving_children() -> Iterator[None]:
    """No test may leave a running child process behind (checked via /proc, ppid == ours)."""
    before = child_pids()
    yield
    deadline = time.monotonic() + 3.0
    while True:
        leftover = child_pids(include_zombies=False) - before
        if not leftover or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    # reap what was adopted and has died since (nobody else waits for those)
    for pid in child_pids() - before - leftover:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    assert not leftover, f"child processes survived the test: {sorted(leftover)}"
