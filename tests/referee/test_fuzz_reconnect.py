"""The reconnection path is total (:mod:`storm_targets`): a seat with a grace that drops, comes
back at once, later, too late or never, flaps hundreds of times, ends its stream for another
reason or sends noise, at its own requests and during its opponent's: the match always ends,
nothing escapes it, the seat plays on or forfeits with a detail, its opponent is untouched, its
inbox stays within the flood limit, and the record replays.  Before the inbox kept one ``Away``
per drop, this fuzz found an inbox of 66 items after shrinking."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from arena.referee import MatchResult, Reason, TimeControl
from arena.referee.fakechannel import FakeTable

from .fuzz_targets import fuzz_settings
from .storm_targets import GRACE, STORM_PLANS, Drop, Flap, Plans, Storm, check_storm


@fuzz_settings(60)
@given(own=STORM_PLANS, meanwhile=STORM_PLANS, seed=st.integers(0, 2**20))
def test_reconnection_path_is_total(own: Plans, meanwhile: Plans, seed: int) -> None:
    check_storm(own, meanwhile, seed)


def test_a_seat_that_never_comes_back_forfeits_after_its_grace() -> None:
    """The plain case the fuzz relies on: a drop without a return is ``disconnected`` after the
    grace, with the drop's own words in the detail."""
    result = check_storm({2: (Drop(None),)}, {}, seed=3)
    (forfeit,) = result.forfeits
    assert forfeit.reason is Reason.DISCONNECTED, forfeit
    assert "connection reset (fuzz)" in forfeit.detail and f"within {GRACE:g}s" in forfeit.detail, forfeit


def test_flapping_during_the_opponents_turns_plays_on() -> None:
    """300 drops and returns at each of the opponent's first ten decisions: the seat plays on."""
    own: Plans = {}
    meanwhile: Plans = {k: (Flap(300),) for k in range(1, 11)}

    async def play() -> tuple[MatchResult, Storm]:
        table = FakeTable(seed=9, control=TimeControl(move_time=2.0, bank=2.0), grace=GRACE)
        storm = Storm(table, own, meanwhile)
        return await table.play([storm.opponent, storm.fuzzed], timeout=60.0), storm

    result, storm = asyncio.run(play())
    assert result.forfeits == (), result.forfeits
    assert storm.inbox_max <= 1, storm.inbox_max  # one Away for 300 drops (it was 300, 600, ...)
