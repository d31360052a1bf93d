"""A lobby's match count per remote bot is stored in the tournament's INTEGER ``games`` column:
``arena serve --listen ... --games 3000000000`` ended in a DataError traceback on PostgreSQL
(SQLite stored it).  It is refused before the server starts, on both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select

from arena.lobby import MAX_GAMES, LobbyConfig, LobbyError
from arena.store.db import Database
from arena.store.models import Tournament

from .helpers import cli_inproc


def test_a_lobby_games_count_the_column_cannot_hold_is_refused(
    db: Database, db_url: str, arena_home: Path
) -> None:
    with pytest.raises(LobbyError, match="games must be 0 to 2,147,483,647"):
        LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=MAX_GAMES + 1)
    assert LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=MAX_GAMES).games == MAX_GAMES
    run = cli_inproc(
        arena_home, db_url, "serve", "--port", "0", "--listen", "127.0.0.1:0", "--games", "3000000000", code=2
    )
    assert "--games" in run.stderr and "2147483647" in run.stderr, run.stderr
    with db.session() as session:
        assert session.exec(select(Tournament)).all() == []


def test_a_lobby_table_with_one_opponent_twice_is_refused_in_one_line(
    db: Database, db_url: str, arena_home: Path
) -> None:
    """``arena serve --listen ... --players 4 --opponents greedy,random,greedy`` ended in an
    IntegrityError traceback (a tournament holds each bot version once); it is one line now,
    naming the sample's file to register a second copy from, and nothing is stored."""
    run = cli_inproc(
        arena_home, db_url, "serve", "--port", "0", "--listen", "127.0.0.1:0", "--players", "4",
        "--opponents", "greedy,random,greedy", "--no-sandbox", code=2,
    )  # fmt: skip
    assert "--opponents names 'greedy' twice" in run.stderr, run.stderr
    assert "arena bots add greedy-2 " in run.stderr and "greedy_bot.py" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and "IntegrityError" not in run.stderr, run.stderr
    with db.session() as session:
        assert session.exec(select(Tournament)).all() == []
