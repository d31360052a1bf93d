"""Fixtures of the human-seat tests: the store tests' private ARENA_HOME and a fresh SQLite URL."""

from store.conftest import arena_home, sqlite_url  # noqa: F401
