"""The one vocabulary of endings: closed, parsed strictly, shared by the engine's words, the referee's
forfeits and the sandbox's process status."""

from __future__ import annotations

import doctest

import pytest

import arena.endings
from arena.endings import (
    MatchEnd,
    Reason,
    UnknownEnding,
    by_forfeit,
    is_forfeit,
    known_terminations,
    parse_ending,
    parse_match_end,
    win_share,
)
from arena.engine.record import TERMINATIONS
from arena.engine.state import Termination
from arena.sandbox.status import ProcessStatus


def test_doctests() -> None:
    result = doctest.testmod(arena.endings)
    assert result.attempted >= 12 and result.failed == 0


@pytest.mark.parametrize("member", [*MatchEnd, *Reason])
def test_every_member_round_trips_through_its_stored_string(member: MatchEnd | Reason) -> None:
    assert parse_ending(str(member)) is member
    assert is_forfeit(str(member)) == isinstance(member, Reason)
    assert by_forfeit(str(member)) == (isinstance(member, Reason) or member is MatchEnd.FORFEIT)


def test_the_values_are_distinct_and_listed() -> None:
    assert known_terminations() == tuple(str(m) for m in (*MatchEnd, *Reason))
    assert len(set(known_terminations())) == len(MatchEnd) + len(Reason)


@pytest.mark.parametrize("bad", ["exploded", "Normal", "", "crashed "])
def test_an_unknown_value_is_refused_naming_the_choices(bad: str) -> None:
    with pytest.raises(UnknownEnding, match=r"unknown termination .*expected one of normal, round-cap"):
        parse_ending(bad)
    with pytest.raises(UnknownEnding):
        is_forfeit(bad)  # never silently "not a forfeit"


def test_a_match_end_is_not_a_forfeit_reason() -> None:
    assert parse_match_end("round-cap") is MatchEnd.ROUND_CAP
    with pytest.raises(UnknownEnding, match="seat's forfeit reason, not a match's ending"):
        parse_match_end("timeout")


def test_the_engine_speaks_the_same_match_ends() -> None:
    """The engine imports nothing of the project, so it keeps its own words: they must be these."""
    assert set(TERMINATIONS) == {str(m) for m in MatchEnd}
    assert (Termination.NORMAL, Termination.ROUND_CAP) == (MatchEnd.NORMAL, MatchEnd.ROUND_CAP)


def test_the_referee_re_exports_the_one_reason() -> None:
    import arena.referee
    import arena.referee.faults

    assert arena.referee.faults.Reason is Reason and arena.referee.Reason is Reason


@pytest.mark.parametrize("status", list(ProcessStatus))
def test_every_process_status_maps_to_a_forfeit_reason(status: ProcessStatus) -> None:
    from arena.referee.faults import process_forfeit, reason_of_process

    reason = reason_of_process(status)
    assert reason in (Reason.CRASHED, Reason.STALLED)
    assert process_forfeit((status, "how")) == (reason, "how") and process_forfeit(None) is None


def test_a_shared_first_place_splits_one_win() -> None:
    for placings in ([1, 2], [1, 1], [1, 1, 3], [1, 1, 1, 4], [1, 1, 1, 1], [2, 1, 3, 3]):
        assert sum(win_share(placings, k) for k in range(len(placings))) == pytest.approx(1.0)
    assert win_share([1, 1, 3], 0) == 0.5 and win_share([1, 1, 3], 2) == 0.0
