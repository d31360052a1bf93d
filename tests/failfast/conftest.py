"""Fail-fast fixtures: a private data directory per test, both sandbox modes, no leftover bots."""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import bwrap_problem

from .helpers import child_pids

PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(scope="session", autouse=True)
def adopt_orphans() -> Iterator[None]:
    """The test process adopts any orphaned descendant, so a bot left behind is seen below."""
    libc = ctypes.CDLL(None, use_errno=True)
    ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    if ok:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture(autouse=True)
def no_surviving_children() -> Iterator[None]:
    """No test may leave a running bot behind (a broken bot's opponent included)."""
    before = child_pids()
    yield
    deadline = time.monotonic() + 3.0
    while True:
        leftover = child_pids(include_zombies=False) - before
        if not leftover or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in child_pids() - before - leftover:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    assert not leftover, f"child processes survived the test: {sorted(leftover)}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data directory (ARENA_HOME) with the default SQLite database."""
    folder = tmp_path / "home"
    monkeypatch.setenv("ARENA_HOME", str(folder))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    return folder


@pytest.fixture(params=["sandboxed", "unsandboxed"])
def sandbox_args(request: pytest.FixtureRequest) -> list[str]:
    """The ``arena match`` flags of each mode; sandboxed needs a working bubblewrap."""
    if request.param == "unsandboxed":
        return ["--no-sandbox"]
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")
    return []
