"""A number beyond PostgreSQL's INTEGER (2**31 - 1), or text with a NUL, names nothing, as on
SQLite: ``arena tournament show 3000000000``, ``replays show``/``list``, and the web's
``/matches/3000000000`` or ``/api/matches?bot=a%00b`` ended in a DataError traceback (a 500
"Internal error" page) on PostgreSQL, where SQLite said "no tournament 3000000000" (a 404)."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from arena.store.bots import newest_version
from arena.store.db import Database, NulInTextError, NumberOutOfRangeError
from arena.store.tournaments import get_tournament

from .helpers import cli_inproc

BIG = 3_000_000_000


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_an_id_beyond_the_integer_columns_names_nothing(db: Database, db_url: str, arena_home: Path) -> None:
    for args in (["tournament", "show"], ["replays", "show"], ["tournament", "resume"]):
        run = cli_inproc(arena_home, db_url, *args, str(BIG), code=1)  # crashes (a traceback) fail here
        assert str(BIG) in run.stderr, run.stderr
    cli_inproc(arena_home, db_url, "replays", "list", "--tournament", str(BIG), code=None)
    if not db.is_sqlite:
        with pytest.raises(NumberOutOfRangeError, match=f"{BIG} is out of range .* up to 2,147,483,647"):
            get_tournament(db, BIG)
        run = cli_inproc(arena_home, db_url, "tournament", "show", str(BIG), code=1)
        assert "out of range" in run.stderr and "nothing stored has that number" in run.stderr, run.stderr
        with pytest.raises(NulInTextError, match="NUL character"):
            newest_version(db, "a\x00b")
    else:
        assert newest_version(db, "a\x00b") is None


def test_an_id_beyond_64_bits_is_one_line_on_every_backend(
    db: Database, db_url: str, arena_home: Path
) -> None:
    """SQLite's integers end at 2**63 - 1: a bigger id raised Python's OverflowError before
    SQLite ran, and ``arena tournament show 99999999999999999999`` ended in its traceback."""
    huge = 10**20
    for args in (["tournament", "show"], ["tournament", "start"], ["leaderboard", "--tournament"]):
        run = cli_inproc(arena_home, db_url, *args, str(huge), code=1)
        assert f"{huge} is out of range" in run.stderr and "nothing was written" in run.stderr, run.stderr
    with pytest.raises(NumberOutOfRangeError, match=f"{huge} is out of range"):
        get_tournament(db, huge)


def test_the_web_answers_404_for_an_id_beyond_the_integer_columns_or_a_nul(db: Database) -> None:
    """Also text with a NUL (``/api/matches?bot=a%00b``, ``/bots/a%00b/charts``): psycopg refuses
    it (PostgreSQL's text holds no NUL), the page was a 500; SQLite found no such bot."""
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    server = BackgroundServer(create_app(db, live=False))
    url = server.start()
    try:
        paths = [f"/matches/{BIG}", f"/api/matches/{BIG}", f"/tournaments/{BIG}", f"/api/tournaments/{BIG}"]
        paths += [f"/matches/{10**20}", f"/api/tournaments/{10**20}"]  # beyond SQLite's 64 bits too
        for path in [*paths, f"/api/leaderboard?tournament={BIG}", f"/api/matches/{BIG}/replay.jsonl"]:
            assert _status(url + path) == 404, path
        for path in ("/matches?bot=a%00b", "/api/matches?bot=a%00b", "/bots/a%00b/charts"):
            assert _status(url + path) in (400, 404), path  # SQLite: "no bot" (400) on the filters
    finally:
        server.stop()
