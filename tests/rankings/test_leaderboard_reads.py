"""The leaderboard reads the finished matches once, as plain columns (issue 20: a refit over
10,000 matches spent most of its time building model objects, twice), and reads the same thing
as before: every finished tournament match with its seats, in rating order; stand-alone matches
and unfinished ones left out.  The web's cached table is refitted once a new result is in."""

from __future__ import annotations

from sqlalchemy import event

from arena.leaderboard import leaderboard
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.db import Database
from arena.store.results import bot_stats, finished_matches, game_results
from arena.store.tournaments import add_match, record_result
from arena.web.boards import LeaderboardCache

from .conftest import Game, store_games

GAMES = [
    Game(["a", "b"], [5, 3]),
    Game(["b", "c"], [4, 4]),
    Game(["c", "a", "b"], [1, 2, 3], ends=["timeout", "normal", "normal"]),
    Game(["a", "c"], [7, 2]),
]


def _seat(seat: int, bot: str, score: int, placing: int) -> SeatOutcome:
    return SeatOutcome(seat, bot, score, placing, "normal", "", 0.0, 0.0, 0)


def test_finished_matches_in_rating_order_with_their_seats(db: Database) -> None:
    tid = store_games(db, GAMES)
    running = add_match(db, tid, 5, "open", [1, 2])  # not finished: left out
    alone = add_match(db, None, 6, "alone", [1, 2])  # stand-alone: never rated
    seats = (
        SeatOutcome(0, "a", 1, 1, "normal", "", 0.0, 0.0, 0),
        SeatOutcome(1, "b", 0, 2, "normal", "", 0.0, 0.0, 0),
    )
    record_result(db, alone, MatchResult("x", 6, 2, "normal", seats, "{}\n"))
    for matches in (finished_matches(db, tid), finished_matches(db)):
        assert [len(m.seats) for m in matches] == [2, 2, 3, 2]
        assert running not in {m.id for m in matches} and alone not in {m.id for m in matches}
        assert [[s.seat for s in m.seats] for m in matches] == [[0, 1], [0, 1], [0, 1, 2], [0, 1]]
        assert [s.termination for s in matches[2].seats] == ["timeout", "normal", "normal"]
    results = game_results(db, tid)
    assert [r.players for r in results] == [("a", "b"), ("b", "c"), ("c", "a", "b"), ("a", "c")]
    assert results[2].placings == (3, 2, 1) and results[0].scores == (5.0, 3.0)
    stats = bot_stats(db, tid)
    assert {n: (s.games, s.timeouts, s.score_total) for n, s in stats.items()} == {
        "a": (3, 0, 14), "b": (3, 0, 10), "c": (3, 1, 7)
    }  # fmt: skip


def test_a_leaderboard_reads_the_seats_once(db: Database) -> None:
    store_games(db, GAMES * 3)
    statements: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement.lower())

    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        rows = leaderboard(db, system="openskill", min_games=0)
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
    assert {r.bot for r in rows} == {"a", "b", "c"}
    reads = [s for s in statements if "matchseat" in s]
    assert len(reads) == 1, reads  # before: one per use (ratings, statistics) and per 500 matches


def test_cached_table_is_refitted_after_a_new_result(db: Database) -> None:
    tid = store_games(db, GAMES)
    cache = LeaderboardCache(db, lambda t, s: leaderboard(db, tournament_id=t, system=s, min_games=0))
    try:
        before = cache.get(tid, "openskill")
        assert before.fresh and before.matches == 4
        assert cache.get(tid, "openskill").rows == before.rows  # unchanged results: the cached table
        store_games(db, [Game(["b", "a"], [9, 0])], name="more")  # another tournament: not this one
        assert cache.get(tid, "openskill").rows == before.rows
        mid = add_match(db, tid, 77, "new", [2, 1])
        seats = (
            SeatOutcome(0, "b", 9, 1, "normal", "", 0.0, 0.0, 0),
            SeatOutcome(1, "a", 0, 2, "normal", "", 0.0, 0.0, 0),
        )
        record_result(db, mid, MatchResult("y", 77, 2, "normal", seats, "{}\n"))
        after = cache.get(tid, "openskill")
        assert after.fresh and after.matches == 5
        games = {r.bot: r.games for r in after.rows}
        assert games == {"a": 4, "b": 4, "c": 3}
    finally:
        cache.pool.shutdown(wait=True)
