"""Account-test fixtures: the store tests' private ARENA_HOME and fresh databases on both backends."""

from __future__ import annotations

from store.conftest import arena_home, backend, db, db_url, new_db_url, sqlite_db, sqlite_url  # noqa: F401
