"""Fail-fast fixtures: a private data directory per test, both sandbox modes, no leftover bots."""

from __future__ import annotations

from pathlib import Path

import pytest
from integration.conftest import adopt_orphans, no_surviving_children

from arena.sandbox import bwrap_problem

# The same no-bot-left-behind guard as the integration tests (re-exported: pytest finds fixtures
# by name in this module).
__all__ = ["adopt_orphans", "no_surviving_children"]


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
