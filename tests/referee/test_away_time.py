"""Item 13: time away is not think time.  A seat whose stream drops mid-decision and comes back
within the grace keeps its clock; the decision's record line carries the think time in ``ms``
and the time away in ``away_ms``; clocks, ``think``/``think_max`` and the result line's
``think_s`` count think time only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.engine import replay
from arena.referee import TimeControl
from arena.referee.channel import Request
from arena.referee.fakechannel import FakeChannel, FakeTable, greedy, greedy_text

AWAY = 2.0  # seconds the in-process seat stays away


def decisions_with_away(record: str) -> list[dict[str, Any]]:
    return [e for e in replay(record).events if "away_ms" in e]


def test_time_away_is_recorded_apart_and_not_charged() -> None:
    """In memory: seat 1's stream drops at its 3rd request and is re-attached 2 s later, on a
    1 s + 1 s clock.  Its think time excludes the 2 s, its bank is untouched.

    The bounds on think time are half the time away: an answer that comes at once stays far
    below them on a loaded machine, a referee that charged the time away cannot."""
    control = TimeControl(move_time=1.0, bank=1.0)
    count = 0
    banks: list[int] = []

    async def dropper(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        nonlocal count
        count += 1
        banks.append(request.bank_ms)
        if count == 3:  # drop now; the same request comes again after the reattach
            channel.close(detail="connection reset (test)")
            asyncio.get_running_loop().call_later(AWAY, table.reconnect, 1)
            return
        channel.answer(request.request_id, greedy_text(request))

    result = asyncio.run(FakeTable(seed=5, control=control, grace=5.0).play([greedy, dropper]))
    assert result.forfeits == (), result.forfeits
    (line,) = decisions_with_away(result.replay)
    assert line["seat"] == 1
    assert line["away_ms"] >= AWAY * 1000 * 0.9, line
    assert line["ms"] < AWAY * 1000 / 2, line  # the greedy answer came at once after the reattach
    assert banks[2] == banks[3] == banks[4] == 1000  # asked, asked again after the reattach, next one
    assert result.seats[1].think_max < AWAY / 2
    think_s = replay(result.replay).result["think_s"]
    assert think_s[1] == pytest.approx(result.seats[1].think_total, abs=1e-3)
    assert think_s[1] < AWAY


def test_time_away_is_free_only_up_to_the_grace_per_match() -> None:
    """A bot that drops its stream at every decision and comes back within the grace (to think
    while "away") got unlimited time: an outside review's bot took 20 s per decision on a 1 s +
    3 s clock.  Time away during decisions is now free up to the grace in all per match; beyond
    that it is think time, and this bot loses on time."""
    control = TimeControl(move_time=0.5, bank=1.0)
    grace = 3.0
    dropped: set[int] = set()

    async def dropper(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        if request.request_id not in dropped:  # every request: drop, come back 1.2 s later, answer
            dropped.add(request.request_id)
            channel.close(detail="connection reset (test)")
            asyncio.get_running_loop().call_later(1.2, table.reconnect, 1)
            return
        channel.answer(request.request_id, greedy_text(request))

    result = asyncio.run(FakeTable(seed=5, control=control, grace=grace).play([greedy, dropper]))
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1 and str(forfeit.reason) == "timeout", forfeit
    assert "do not count (time away is free up to 3s per match)" in forfeit.detail, forfeit.detail
    # two free outages (2.4 s), then 0.6 s of the third and all of the next ones are charged:
    # 0.5 s per decision + 1 s of bank run out at the fifth (the fourth on a slow machine)
    assert 4 <= len(dropped) <= 5, dropped
    free = [line["away_ms"] for line in decisions_with_away(result.replay)]
    assert sum(free) <= grace * 1000 + 1, free


def test_thousands_of_drops_between_turns_queue_one_away() -> None:
    """An outside review's reading: every drop of a seat that may come back queued an ``Away``
    in its inbox and every return kept an outage, unbounded while the seat is not asked (the
    match reads the inbox only during the seat's decisions).  A seat that drops and comes back
    400 times during each of its opponent's decisions now leaves one ``Away`` in its inbox and
    no growing list, and the match goes on normally."""
    storms = 0
    sizes: list[int] = []

    async def asked(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        nonlocal storms
        link = table.match.links[1]
        if table.channels[1] and not link.can_come_back() and 1 not in table.match.forfeits:
            storms += 1
            for _ in range(400):
                table.channel(1).close(detail="connection reset (test)")
                table.reconnect(1)
            sizes.append(link.inbox.qsize())
            assert not hasattr(link, "outages") or len(link.outages) < 2
        channel.answer(request.request_id, greedy_text(request))

    result = asyncio.run(FakeTable(seed=7, grace=5.0).play([asked, greedy]))
    assert result.forfeits == (), result.forfeits
    assert storms >= 5, storms
    assert max(sizes) <= 1, sizes  # was 400 after the first storm, 800 after the second, ...
