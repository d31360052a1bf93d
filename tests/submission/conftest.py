"""Submission fixtures: the store tests' private ARENA_HOME and fresh databases on SQLite and
PostgreSQL (``db`` runs a test on both), plus users and sample bot files."""

from __future__ import annotations

from pathlib import Path

import pytest
from store.conftest import arena_home, backend, db, db_url, new_db_url, sqlite_db, sqlite_url  # noqa: F401

from arena.accounts.users import create_user
from arena.store.db import Database
from arena.store.models_accounts import UserAccount

REPO = Path(__file__).resolve().parents[2]
GOOD_BOT = REPO / "bots" / "random_bot.py"
CRASH_BOT = Path(__file__).resolve().parent / "crash_bot.py"


@pytest.fixture
def alice(db: Database) -> UserAccount:  # noqa: F811
    return create_user(db, "alice", "correct horse battery")


@pytest.fixture
def bob(db: Database) -> UserAccount:  # noqa: F811
    return create_user(db, "bob", "another good password")
