"""Bot listings are in code point order on every backend: PostgreSQL's ORDER BY follows the
database's collation, so a server made with an en-US locale listed ``alpha B2 beta Zed`` where
SQLite (and ``arena bots list``'s fast path) list ``B2 Zed alpha beta``."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from arena.accounts.ownership import owned_bots
from arena.accounts.users import create_user
from arena.store.bots import add_bot, list_bots
from arena.store.db import Database
from arena.store.models_accounts import BotOwner
from arena.submission.botpage import bot_index
from arena.web.queries import bot_names

from .conftest import _admin_url
from .helpers import bot_copy

NAMES = ["beta", "Zed", "alpha", "B2"]


@pytest.fixture
def collated_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database; on PostgreSQL one whose collation is ICU's en-US (case-blind order)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    admin = _admin_url()
    name = f"arena_t_{secrets.token_hex(6)}"
    conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        icu = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 {icu}')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_bot_listings_are_in_code_point_order_whatever_the_collation(
    collated_url: str, tmp_path: Path
) -> None:
    db = Database(collated_url)
    try:
        user = create_user(db, "owner", "correct horse battery")
        for name in NAMES:
            v = add_bot(db, name, bot_copy(tmp_path / name, name))
            with db.session() as session:
                session.add(BotOwner(bot_id=v.bot_id, user_id=user.id or 0))
        assert [i.bot.name for i in list_bots(db)] == sorted(NAMES) == ["B2", "Zed", "alpha", "beta"]
        assert bot_names(db) == sorted(NAMES)
        assert [b.name for b in owned_bots(db, user.id or 0)] == sorted(NAMES)
        assert [b.name for b in bot_index(db)] == sorted(NAMES)
    finally:
        db.close()
