"""Forfeits and wins as the stored results count them, through the one vocabulary (arena.endings):
every forfeit reason reaches the leaderboard, an unknown stored ending is an error rather than a
silently dropped forfeit, and a shared first place counts the same in the stored results and in
the live tournament display."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select

from arena.endings import MatchEnd, Reason, UnknownEnding, win_share
from arena.leaderboard import leaderboard
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.bots import add_bot, version_names
from arena.store.db import Database
from arena.store.models import MatchSeat
from arena.store.results import bot_stats
from arena.store.tournaments import add_match, record_result
from arena.termui import make_console
from arena.tournament.display import TournamentDisplay
from arena.tournament.runner import Progress
from arena.tournament.service import create

REPO = Path(__file__).resolve().parents[2]
BOTS = ("greedy", "random", "invader")


def _field(db: Database, players: int) -> tuple[int, list[int], list[str]]:
    """A tournament of the first ``players`` sample bots: its id, their version ids and names."""
    vids = []
    for name in BOTS[:players]:
        v = add_bot(db, name, REPO / "bots" / f"{name}_bot.py")
        assert v.id is not None
        vids.append(v.id)
    t = create(db, list(BOTS[:players]), table_sizes=(players,), games=1, seed=1)
    assert t.id is not None
    names = version_names(db, vids)
    return t.id, vids, [names[v] for v in vids]


def _play(
    db: Database, tid: int, vids: list[int], names: list[str], placings: list[int], ends: list[str]
) -> MatchResult:
    """Record one finished match of the tournament with these placings and seat endings."""
    mid = add_match(db, tid, seed=7, group=f"g{len(ends)}-{placings}", version_ids=vids)
    seats = tuple(
        SeatOutcome(k, names[k], 10 * (4 - p), p, ends[k], "", 0.1, 0.05, 3) for k, p in enumerate(placings)
    )
    match_end = MatchEnd.FORFEIT if any(e in set(Reason) for e in ends) else MatchEnd.NORMAL
    result = MatchResult(f"m{mid}", 7, len(vids), match_end, seats, "a replay\n")
    assert record_result(db, mid, result)
    return result


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("reason", list(Reason))
def test_every_forfeit_reason_is_counted_by_the_leaderboard(db: Database, reason: Reason) -> None:
    tid, vids, names = _field(db, 2)
    _play(db, tid, vids, names, [1, 2], [MatchEnd.FORFEIT, reason])
    _play(db, tid, vids[::-1], names[::-1], [1, 2], [MatchEnd.NORMAL, MatchEnd.NORMAL])
    stats = bot_stats(db, tid)
    offender, other = stats[names[1]], stats[names[0]]
    assert (offender.forfeits, offender.by_reason, offender.timeouts) == (
        1,
        {reason: 1},
        int(reason is Reason.TIMEOUT),
    )
    assert (other.forfeits, other.by_reason, other.timeouts) == (0, {}, 0)  # it won by forfeit
    rows = {r.bot: r for r in leaderboard(db, tournament_id=tid, min_games=0)}
    assert rows[names[1]].forfeits == 1 and rows[names[0]].forfeits == 0
    assert rows[names[1]].timeouts == int(reason is Reason.TIMEOUT)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_an_unknown_stored_ending_is_an_error_not_a_dropped_forfeit(db: Database) -> None:
    tid, vids, names = _field(db, 2)
    _play(db, tid, vids, names, [1, 2], [MatchEnd.FORFEIT, Reason.CRASHED])
    with db.session() as session:
        seat = session.exec(select(MatchSeat).where(MatchSeat.termination == "crashed")).one()
        seat.termination = "exploded"  # e.g. written by a newer arena with a new forfeit reason
        session.add(seat)
    with pytest.raises(UnknownEnding, match="unknown termination 'exploded'"):
        bot_stats(db, tid)


def test_a_shared_first_place_counts_the_same_live_and_stored(db: Database) -> None:
    """The live display (fed each result as the tournament runs) and the stored leaderboard agree
    on wins, with first place shared by two of three seats (each 1/2) and with a forfeit."""
    tid, vids, names = _field(db, 3)
    display = TournamentDisplay("t", console=make_console(stderr=True))
    played = [
        _play(db, tid, vids, names, [1, 1, 3], [MatchEnd.NORMAL] * 3),
        _play(db, tid, vids[1:] + vids[:1], names[1:] + names[:1], [1, 2, 3], [MatchEnd.ROUND_CAP] * 3),
        _play(db, tid, vids, names, [1, 1, 3], [MatchEnd.FORFEIT, MatchEnd.FORFEIT, Reason.TIMEOUT]),
    ]
    for k, result in enumerate(played, start=1):
        display(Progress(tid, len(played), k, 0, result, None))
    stored = bot_stats(db, tid)
    board = {r.bot: r for r in leaderboard(db, tournament_id=tid, min_games=0)}
    expected = {n: 0.0 for n in names}
    for result in played:
        for k, s in enumerate(result.seats):
            expected[s.name] += win_share(result.placings, k)
    assert expected == {names[0]: 1.0, names[1]: 2.0, names[2]: 0.0}  # 1/2 + 1/2, then 1 + 1/2 + 1/2
    for name in names:
        live = display.standings[name]
        assert live.wins == pytest.approx(stored[name].wins) == pytest.approx(board[name].wins)
        assert live.wins == pytest.approx(expected[name])
        assert live.forfeits == stored[name].forfeits == board[name].forfeits
        assert live.games == stored[name].games == 3
    assert stored[names[2]].forfeits == 1 and stored[names[2]].by_reason == {Reason.TIMEOUT: 1}
