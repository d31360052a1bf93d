"""The lists stay cheap with 10,000 matches: every filter is an indexed query with LIMIT/OFFSET,
never "load all matches".

Checked by the work the database and the ORM do, not by the clock (a loaded machine would make a
time bound fail for nothing): the SQLite virtual machine's instruction count of each listing
(``sqlite3``'s progress handler, counted per 1,000 instructions) and the rows the ORM turns into
objects.  Both are deterministic for a given database.  ``benchmarks/web.py`` measures the
latency over HTTP.

The instruction bound is six times the costliest listing today (a page over HTTP, about 520
thousand instructions) and far below what a query that walks the seats once per match costs:
``test_the_bounds_catch_a_per_match_scan_and_a_full_load`` runs such a plan (the correlated
``EXISTS`` that once made the bot filter take seconds) and a load of every match, and checks
that each is over its bound."""

from __future__ import annotations

import importlib.util
import sqlite3
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from sqlalchemy import event, exists, func
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Mapper
from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat
from arena.web.queries import MatchFilters, list_matches

from .conftest import REPO

pytestmark = pytest.mark.timeout(180)

N = 10_000
PER_PAGE = 50
STEP = 1_000  # VM instructions per progress-handler call
MAX_KILO_STEPS = 3_000  # per listing: today's cost 40-520 (thousands of instructions)
MAX_LOADS = 5 * PER_PAGE  # ORM objects per listing: the page's matches, their seats, bots


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_web", REPO / "benchmarks" / "web.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('big') / 'arena.db'}")
    bench().fill(db, N)
    yield db
    db.close()


@dataclass
class Work:
    """What the database did inside :func:`counting`."""

    kilo_steps: int = 0  # thousands of SQLite VM instructions
    loads: int = 0  # ORM instances built from rows


@contextmanager
def counting(db: Database, stop_over: int | None = None) -> Iterator[Work]:
    """Count the SQLite VM instructions of every connection checked out of ``db``'s pool, and
    every ORM instance loaded, while the block runs (any thread: the web server's too).  With
    ``stop_over``, a statement is interrupted once the count passes it (sqlite3 raises
    ``OperationalError: interrupted``)."""
    work = Work()

    def tick() -> int:
        work.kilo_steps += 1
        return int(stop_over is not None and work.kilo_steps > stop_over)  # 0 = go on

    def on_checkout(dbapi: Any, _record: Any, _proxy: Any) -> None:
        assert isinstance(dbapi, sqlite3.Connection)
        dbapi.set_progress_handler(tick, STEP)

    def on_checkin(dbapi: Any, _record: Any) -> None:
        dbapi.set_progress_handler(None, STEP)

    def on_load(_target: Any, _context: Any) -> None:
        work.loads += 1

    event.listen(db.engine, "checkout", on_checkout)
    event.listen(db.engine, "checkin", on_checkin)
    event.listen(Mapper, "load", on_load)
    try:
        yield work
    finally:
        event.remove(db.engine, "checkout", on_checkout)
        event.remove(db.engine, "checkin", on_checkin)
        event.remove(Mapper, "load", on_load)


@pytest.mark.parametrize(
    ("filters", "page"),
    [
        (MatchFilters(), 1),
        (MatchFilters(), N // PER_PAGE),
        (MatchFilters(bot="search"), 1),
        (MatchFilters(bot="alpha", termination="normal"), 30),
        (MatchFilters(termination="timeout"), 1),
        (MatchFilters(tournament=7), 5),
        (MatchFilters(status=None, since=None), 100),
    ],
)
def test_list_queries_do_bounded_work(big_db: Database, filters: MatchFilters, page: int) -> None:
    with counting(big_db) as work:
        result = list_matches(big_db, filters, page=page, per_page=PER_PAGE)
    print(f"{filters} page {page}: {work}")
    assert work.kilo_steps < MAX_KILO_STEPS, f"{filters} page {page}: {work}"
    assert work.loads <= MAX_LOADS, f"{filters} page {page}: {work}"
    if filters.termination == "timeout":
        assert result.total == 0
    else:
        assert len(result.items) == PER_PAGE and all(len(m.seats) >= 2 for m in result.items)
        assert result.total >= PER_PAGE * page
    if filters.bot:
        assert all(filters.bot in [s.bot for s in m.seats] for m in result.items)


def test_the_bounds_catch_a_per_match_scan_and_a_full_load(big_db: Database) -> None:
    """The bounds can fail.  The bot filter as a correlated EXISTS that walks the bot's seats
    (the ``bot_version_id`` index) once per match -- the plan that once took seconds; ``+ 0``
    keeps SQLite from using the ``match_id`` index instead -- passes the instruction bound (it
    is interrupted there, so the test stays quick).  Loading every match passes the ORM bound."""
    with big_db.session() as session:
        ids = session.exec(
            select(BotVersion.id).join(Bot, col(Bot.id) == col(BotVersion.bot_id)).where(Bot.name == "search")
        ).all()
    assert ids
    seat_of_bot = exists().where(
        col(MatchSeat.match_id) + 0 == col(Match.id), col(MatchSeat.bot_version_id).in_(ids)
    )
    with (
        counting(big_db, stop_over=MAX_KILO_STEPS) as work,
        big_db.session() as session,
        pytest.raises(OperationalError, match="interrupted"),
    ):
        session.exec(select(func.count()).select_from(Match).where(seat_of_bot)).one()
    assert work.kilo_steps > MAX_KILO_STEPS, work
    with counting(big_db) as work, big_db.session() as session:
        everything = session.exec(select(Match)).all()
    assert len(everything) == N and work.loads > MAX_LOADS, work


def test_matches_page_and_api_over_http(big_db: Database) -> None:
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    with BackgroundServer(create_app(big_db)) as base:
        for path in (
            "/matches",
            f"/matches?page={N // PER_PAGE}&bot=beta",
            "/api/matches",
            "/api/matches?page=150",
        ):
            with counting(big_db) as work, urllib.request.urlopen(base + path, timeout=60) as r:
                assert r.status == 200
                body = r.read()
            print(path, work, len(body))
            assert body, path
            assert work.kilo_steps < MAX_KILO_STEPS, (path, work)
            assert work.loads <= MAX_LOADS, (path, work)
