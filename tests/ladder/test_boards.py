"""The web's leaderboard cache (arena/web/boards.py): a big result set never makes a request wait
for a refit: the first answer says "computing", later ones are the last leaderboard (marked
stale) while one background thread refits; small result sets are computed in the request."""

from __future__ import annotations

import threading
import time

from arena.leaderboard import LeaderRow
from arena.store.db import Database
from arena.store.models import Match, MatchStatus, Tournament
from arena.web.boards import LeaderboardCache


def _finish(db: Database, n: int) -> None:
    with db.session() as session:
        t = Tournament(name="t", format="round-robin", table_sizes="2", games=1, seed=1, move_time=1, bank=1)
        session.add(t)
        session.flush()
        for i in range(n):
            session.add(Match(tournament_id=t.id, ordinal=i, seed=1, status=MatchStatus.FINISHED))


def _row(name: str) -> LeaderRow:
    return LeaderRow(1, name, 1500.0, None, None, 1500.0, 3, 1.0, 10.0, 0, 0)


def test_big_result_sets_are_refitted_in_the_background(sqlite_db: Database) -> None:
    db = sqlite_db
    _finish(db, 5)
    gate = threading.Event()
    calls: list[int] = []

    def slow(tid: int | None, system: str) -> list[LeaderRow]:
        calls.append(1)
        gate.wait(10)
        return [_row(f"v{len(calls)}")]

    cache = LeaderboardCache(db, slow, sync_limit=2, background=slow)
    t0 = time.perf_counter()
    first = cache.get(None, "pl")
    assert time.perf_counter() - t0 < 1.0  # did not wait for the slow refit
    assert first.rows == [] and first.computing and first.note and "being computed" in first.note
    assert cache.get(None, "pl").computing and len(calls) == 1  # one computation at a time
    gate.set()
    deadline = time.monotonic() + 10
    while not (answer := cache.get(None, "pl")).fresh:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert [r.bot for r in answer.rows] == ["v1"] and answer.note is None

    gate.clear()
    _finish(db, 1)  # a new result: the old board is served, marked stale, while it is refitted
    stale = cache.get(None, "pl")
    assert not stale.fresh and [r.bot for r in stale.rows] == ["v1"] and stale.matches == 5
    assert stale.note is not None and "as of 5 matches" in stale.note
    gate.set()
    while not (answer := cache.get(None, "pl")).fresh:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert [r.bot for r in answer.rows] == ["v2"]


def test_small_result_sets_are_computed_in_the_request_and_errors_kept(sqlite_db: Database) -> None:
    _finish(sqlite_db, 3)

    def broken(tid: int | None, system: str) -> list[LeaderRow]:
        raise ValueError("no ratings for you")

    answer = LeaderboardCache(sqlite_db, broken).get(None, "pl")
    assert answer.fresh and isinstance(answer.error, ValueError)
    ok = LeaderboardCache(sqlite_db, lambda tid, s: [_row("a")]).get(7, "elo")
    assert ok.fresh and [r.bot for r in ok.rows] == ["a"]


def test_the_background_refit_runs_in_a_process_of_its_own(sqlite_db: Database) -> None:
    """By default the big refit happens in a spawned process over a read-only opening (a
    CPU-bound refit on a thread would hold the interpreter lock every request needs)."""
    _finish(sqlite_db, 3)

    def never(tid: int | None, system: str) -> list[LeaderRow]:
        raise AssertionError("computed in the request's process")

    cache = LeaderboardCache(sqlite_db, never, sync_limit=0)
    assert cache.get(None, "pl").computing
    deadline = time.monotonic() + 60
    while not (answer := cache.get(None, "pl")).fresh:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert answer.error is None and answer.rows == []  # matches without seats: nobody rated
    assert cache._procs is not None
