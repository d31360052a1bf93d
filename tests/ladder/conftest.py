"""Ladder test fixtures: the store tests' (a private ARENA_HOME per test, checked for surviving
bot processes afterwards; a fresh database on SQLite and on PostgreSQL), reused."""

from __future__ import annotations

from store.conftest import (  # noqa: F401 (fixtures)
    arena_home,
    backend,
    db,
    db_url,
    new_db_url,
    sqlite_db,
    sqlite_url,
)
