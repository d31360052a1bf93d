"""Server-test fixtures: the store tests' private ARENA_HOME (no bot process may outlive a test)
and fresh databases on SQLite and PostgreSQL."""

from __future__ import annotations

from store.conftest import arena_home, backend, db, db_url, new_db_url, sqlite_db, sqlite_url  # noqa: F401
