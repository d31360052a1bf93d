"""``arena bots list`` without the ORM (:mod:`arena.store.quickread`): the same rows as the ORM
path on the same SQLite database, and ``None`` (so the ORM path answers, with its precise
message) whenever the fast path cannot be sure."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.store.bots import add_bot, list_bots, remove_bot
from arena.store.db import Database
from arena.store.models import Match, MatchSeat
from arena.store.quickread import BotRow, bot_rows_fast

from .helpers import bot_copy


def _orm_rows(db: Database, *, include_removed: bool) -> list[BotRow]:
    return [BotRow.from_info(i) for i in list_bots(db, include_removed=include_removed)]


def _populate(db: Database, tmp_path: Path) -> None:
    """Bots with several versions, a removed one, one fresh per match, and match seats on old
    and new versions (the count covers every version)."""
    a = bot_copy(tmp_path / "a", "alpha")
    v1 = add_bot(db, "alpha", a)
    a.write_text(a.read_text() + "# v2\n")
    v2 = add_bot(db, "alpha", a)
    b = add_bot(db, "Beta", bot_copy(tmp_path / "b", "beta"), persistent=False)
    add_bot(db, "gone", bot_copy(tmp_path / "c", "gone"))
    remove_bot(db, "gone")
    with db.session() as session:
        for ordinal, (x, y) in enumerate([(v1, b), (v2, b), (v2, b)]):
            match = Match(ordinal=ordinal, seed=ordinal)
            session.add(match)
            session.flush()
            assert match.id is not None and x.id is not None and y.id is not None
            session.add(MatchSeat(match_id=match.id, seat=0, bot_version_id=x.id))
            session.add(MatchSeat(match_id=match.id, seat=1, bot_version_id=y.id))


def test_fast_rows_equal_the_orm_rows(sqlite_url: str, tmp_path: Path) -> None:
    db = Database(sqlite_url)
    try:
        assert bot_rows_fast(url=sqlite_url) == [] == _orm_rows(db, include_removed=False)
        _populate(db, tmp_path)
        for include_removed in (False, True):
            fast = bot_rows_fast(include_removed=include_removed, url=sqlite_url)
            assert fast is not None
            assert fast == _orm_rows(db, include_removed=include_removed)
        listed = bot_rows_fast(url=sqlite_url)
        assert listed is not None
        assert [(r.name, r.version, r.versions, r.matches, r.persistent) for r in listed] == [
            ("Beta", 1, 1, 3, False),
            ("alpha", 2, 2, 3, True),
        ]
        everything = bot_rows_fast(include_removed=True, url=sqlite_url)
        assert everything is not None and [r.name for r in everything if r.removed] == ["gone"]
    finally:
        db.close()


def test_fast_path_declines_what_only_the_orm_can_answer(sqlite_url: str, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "arena.db"
    assert bot_rows_fast(url=f"sqlite:///{missing}") is None  # NoDatabaseError comes from the ORM path
    assert bot_rows_fast(url="postgresql+psycopg://u:p@127.0.0.1:1/db") is None
    assert bot_rows_fast(url=sqlite_url + "?timeout=3") is None  # options: full URL parsing needed
    Database(sqlite_url).close()  # creates the schema
    path = Path(sqlite_url.removeprefix("sqlite:///"))
    assert bot_rows_fast(url=sqlite_url) == []
    with sqlite3.connect(path) as conn:  # an older (or newer) schema: the ORM path explains
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    assert bot_rows_fast(url=sqlite_url) is None
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    assert bot_rows_fast(url=f"sqlite:///{junk}") is None
