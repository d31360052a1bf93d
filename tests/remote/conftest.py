"""Fixtures of the remote-bot tests: a fresh SQLite database with the greedy sample registered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.store.bots import add_bot
from arena.store.db import Database

REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    """A database of its own (``ARENA_HOME`` in ``tmp_path``) holding the greedy sample bot."""
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    database = Database()
    add_bot(database, "greedy", REPO / "bots" / "greedy_bot.py")
    yield database
    database.close()
