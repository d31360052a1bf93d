"""Ladder test fixtures: the store tests' (a private ARENA_HOME per test, checked for surviving
bot processes afterwards; a fresh database on SQLite and on PostgreSQL), reused."""

from __future__ import annotations

import pytest
from store.conftest import (  # noqa: F401 (fixtures)
    arena_home,
    backend,
    db,
    db_url,
    new_db_url,
    sqlite_db,
    sqlite_url,
)


@pytest.fixture(autouse=True)
def _no_inherited_live_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ladder run in this process sets ``$ARENA_LIVE_SOCKET`` for its workers
    (arena/ladder/service.py); the variable is taken back after each test, so a later test in the
    same pytest worker (a web app's live hub) does not bind the ladder's channel instead of its own."""
    monkeypatch.delenv("ARENA_LIVE_SOCKET", raising=False)
