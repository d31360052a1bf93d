"""Every forfeit path of the real :class:`~arena.referee.match.Match`, driven through the in-memory
seam (:mod:`arena.referee.fakechannel`): no gRPC, no processes, each match over in milliseconds.

Each test plays a real match (real clocks, deadlines, judging, records) between a greedy seat 0
and a seat 1 that misbehaves at its ``AT``-th request, and checks the forfeit's reason, detail and
evidence, that seat 1 was told its result and its stream ended, that seat 0 won, and that the
record replays.  :data:`COVERED` names the test of every :class:`Reason`; a reason without one
fails :func:`test_every_forfeit_reason_has_a_test`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable

import pytest

from arena.engine import replay
from arena.engine.actions import ACTIONS_BY_TEXT
from arena.referee import MatchResult, Reason, TimeControl
from arena.referee.channel import Request
from arena.referee.fakechannel import Answerer, FakeChannel, FakeTable, greedy, greedy_text
from arena.referee.seatlink import INBOX_LIMIT

AT = 3  # seat 1 misbehaves at its third request
FAST = TimeControl(move_time=0.05, bank=0.1)  # 150 ms: a timeout is quick, a loaded machine no risk
LIMIT_S = 30.0  # a hang, not a speed check: one fake match takes milliseconds idle, seconds under load

Act = Callable[[FakeTable, FakeChannel, Request], Awaitable[None] | None]


def at(n: int, act: Act) -> Answerer:
    """An answerer that plays greedy, except at its ``n``-th request where it does ``act``."""
    count = 0

    async def answer(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        nonlocal count
        count += 1
        if count != n:
            channel.answer(request.request_id, greedy_text(request))
            return
        done = act(table, channel, request)
        if done is not None:
            await done

    return answer


def silent(table: FakeTable, channel: FakeChannel, request: Request) -> None:
    """Answer nothing."""


def run(table: FakeTable, seat1: Answerer, *, absent: tuple[int, ...] = ()) -> MatchResult:
    start = time.monotonic()
    result = asyncio.run(table.play([greedy, seat1], absent=absent))
    assert time.monotonic() - start < LIMIT_S
    return result


def forfeit_of(result: MatchResult, table: FakeTable, reason: Reason) -> str:
    """Seat 1 forfeited for ``reason``: checked everywhere it shows; returns the detail."""
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1 and forfeit.reason is reason, forfeit
    assert forfeit.detail
    assert result.termination == "forfeit"
    assert result.seats[1].termination == str(reason)
    assert result.placings == (1, 2)
    rep = replay(result.replay)  # the record replays exactly
    assert rep.result["forfeits"][0]["reason"] == str(reason)
    if table.channels[1]:  # a connected seat is told its own line, then its stream ends
        channel = table.channel(1)
        assert channel.finished
        (told,) = channel.results
        assert [(s.seat, s.termination) for s in told.seats] == [(1, str(reason))]
        assert table.channel(0).results[-1].seats[0].placing == 1
    return forfeit.detail


# ---------------------------------------------------------------------- the clock


def test_timeout() -> None:
    table = FakeTable(control=FAST)
    detail = forfeit_of(run(table, at(AT, silent)), table, Reason.TIMEOUT)
    assert "no answer after" in detail
    assert "limit 0.150s: 0.050s per decision + 0.100s left in the bank" in detail


def test_timeout_detail_names_the_bank_left() -> None:
    """The limit in a timeout's detail is split into move time and the bank left after earlier
    decisions drew on it."""
    table = FakeTable(control=TimeControl(move_time=0.05, bank=1.0))

    count = 0

    async def seat1(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        nonlocal count
        count += 1
        if count == AT:
            await asyncio.sleep(0.3)  # 0.25 s over the move time: drawn from the bank
        if count <= AT:
            channel.answer(request.request_id, greedy_text(request))

    detail = forfeit_of(run(table, seat1), table, Reason.TIMEOUT)
    head, _, bank = detail.partition("0.050s per decision + ")
    assert head.startswith("no answer after") and bank.endswith("s left in the bank)")
    assert 0.2 < float(bank.split("s")[0]) < 0.76  # 1 s less the 0.25 s drawn (and a little more)


def test_timeout_on_cpu() -> None:
    """In CPU mode an answer in time that used more CPU than move time + bank is a timeout."""
    table = FakeTable(control=TimeControl(move_time=0.5, bank=0.5, cpu=True))

    def burn(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        table.processes.cpu[1] = table.processes.cpu.get(1, 0.0) + 2.5
        channel.answer(request.request_id, greedy_text(request))

    table.processes.cpu[1] = 0.0
    detail = forfeit_of(run(table, at(AT, burn)), table, Reason.TIMEOUT)
    assert "used 2.500s of CPU (limit 1.000s: 0.500s per decision + 0.500s left in the bank)" in detail


def test_stalled_at_the_deadline() -> None:
    """A seat whose process is found stopped at the deadline stalled (it did not time out)."""
    table = FakeTable(control=FAST)

    def freeze(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        table.processes.freeze(1)

    detail = forfeit_of(run(table, at(AT, freeze)), table, Reason.STALLED)
    assert detail.startswith("the process is stopped (frozen): no answer after")


def test_stalled_connection() -> None:
    """The transport cut a connection that stopped answering keepalive pings."""
    table = FakeTable()

    def cut(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.close(Reason.STALLED, "keepalive ping unanswered (fake)")

    detail = forfeit_of(run(table, at(AT, cut)), table, Reason.STALLED)
    assert "keepalive" in detail


# ---------------------------------------------------------------------- what the seat sends


def test_illegal_action() -> None:
    def wrong(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        text = next(t for t in sorted(ACTIONS_BY_TEXT) if t not in request.legal_actions)
        channel.answer(request.request_id, text)

    detail = forfeit_of(run(table := FakeTable(), at(AT, wrong)), table, Reason.ILLEGAL_ACTION)
    assert detail


@pytest.mark.parametrize(
    ("act", "expected"),
    [
        (lambda t, c, r: c.answer(r.request_id, "dance the macarena"), "dance"),
        (lambda t, c, r: c.answer(r.request_id + 100, greedy_text(r)), "which was never sent"),
        (lambda t, c, r: c.answer(0, greedy_text(r)), "answered request 0, which was never sent"),
        (
            lambda t, c, r: c.answer(t.channel(0).requests[-1].request_id, greedy_text(r)),
            "which was never sent to this seat",
        ),
        (lambda t, c, r: c.garbage(13, "truncated message"), "sent 13 bytes that are not a BotMessage"),
        (lambda t, c, r: c.unexpected(), "sent an empty message"),
        (lambda t, c, r: c.unexpected("welcome"), "sent a welcome message where an answer was due"),
    ],
    ids=[
        "bad-text",
        "id-never-sent",
        "id-zero",
        "id-of-another-seat",
        "garbage-bytes",
        "empty-message",
        "unexpected-message",
    ],
)
def test_malformed_action(act: Act, expected: str) -> None:
    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, act)), table, Reason.MALFORMED_ACTION)
    assert expected in detail, detail


def test_malformed_answer_before_its_request() -> None:
    """An answer naming a request not yet sent when it arrived is malformed, even once that
    request has gone out by the time the match reads it."""

    def early(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.answer(request.request_id, greedy_text(request))
        channel.answer(request.request_id + 2, greedy_text(request))  # its next request's id

    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, early)), table, Reason.MALFORMED_ACTION)
    assert "never sent to this seat before the answer arrived" in detail
    assert len(table.channel(1).requests) == AT + 1  # judged when its next request was read


def test_malformed_answer_before_any_request() -> None:
    table = FakeTable()
    channel = table.attach(1)
    channel.answer(1, "place purple-4")  # before the match has asked it anything
    detail = forfeit_of(run(table, greedy), table, Reason.MALFORMED_ACTION)
    assert "the latest request it had been sent then: none" in detail


@pytest.mark.parametrize(
    ("flood", "expected"),
    [
        (lambda c: [c.hello() for _ in range(INBOX_LIMIT + 1)], "over 64 unread messages"),
        (lambda c: [c.ready() for _ in range(INBOX_LIMIT + 1)], "over 64 ready messages"),
    ],
    ids=["unread", "ready"],
)
def test_malformed_flood(flood: Callable[[FakeChannel], object], expected: str) -> None:
    def act(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        flood(channel)

    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, act)), table, Reason.MALFORMED_ACTION)
    assert expected in detail


def test_a_ready_sent_again_before_every_answer_is_ignored() -> None:
    """A Ready sent again is ignored (protocol §3): one before each of a whole game's answers is
    no flood (the flood limit counts within one decision; it counted over the whole match and
    forfeited such a bot after 64 moves)."""
    answered = 0

    async def ready_then_greedy(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        nonlocal answered
        channel.ready()
        channel.answer(request.request_id, greedy_text(request))
        answered += 1

    table = FakeTable()
    result = run(table, ready_then_greedy)
    assert result.forfeits == () and result.termination != "forfeit", result.forfeits
    assert answered > INBOX_LIMIT  # more Readys in the game than the per-decision limit


def test_malformed_flood_of_messages_read_as_they_come() -> None:
    """Messages that answer nothing count even when the match reads each before the next."""

    async def chatter(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        for _ in range(INBOX_LIMIT + 1):
            channel.hello()
            await asyncio.sleep(0)  # the match reads it

    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, chatter)), table, Reason.MALFORMED_ACTION)
    assert "messages that answer nothing" in detail


def test_malformed_keeps_the_evidence() -> None:
    table = FakeTable()
    run(table, at(AT, lambda t, c, r: c.answer(r.request_id, "dance")))
    (forfeit,) = table.match.forfeits.values()
    assert forfeit.evidence["last_message"] == "dance"
    assert "time_used_ms" in forfeit.evidence


# ---------------------------------------------------------------------- the stream and the process


def test_disconnected() -> None:
    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, lambda t, c, r: c.close())), table, Reason.DISCONNECTED)
    assert detail == "the stream ended (fake)"
    assert table.processes.settled == [1]  # its process was given the chance to say more


def test_disconnected_while_idle() -> None:
    """A stream that ends between the seat's turns forfeits before its next request."""

    async def leave(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.answer(request.request_id, greedy_text(request))
        channel.close()

    table = FakeTable()
    forfeit_of(run(table, at(AT, leave)), table, Reason.DISCONNECTED)
    assert len(table.channel(1).requests) == AT


def test_crashed_before_connecting() -> None:
    """A bot whose process exits before it connects forfeits at once (no no-show wait)."""
    table = FakeTable(connect_timeout=30.0)
    table.processes.crash(1, stderr="Traceback (most recent call last):\nSyntaxError: invalid syntax\n")
    detail = forfeit_of(run(table, greedy, absent=(1,)), table, Reason.CRASHED)
    assert detail == "the process exited with status 1 before connecting: SyntaxError: invalid syntax"


def test_both_crashed_before_connecting_both_forfeit() -> None:
    """Two bots whose processes both die at start: both forfeit, neither is credited a win (the
    match used to be decided at the first crash, and the second seat won by forfeit)."""
    table = FakeTable(connect_timeout=30.0)
    table.processes.crash(0, stderr="SyntaxError: invalid syntax\n")
    table.processes.crash(1, "the process exited with status 0")
    start = time.monotonic()
    result = asyncio.run(table.play([greedy, greedy], absent=(0, 1)))
    assert time.monotonic() - start < LIMIT_S  # both were seen to crash: no no-show wait
    assert [f.reason for f in result.forfeits] == [Reason.CRASHED, Reason.CRASHED]
    assert result.termination == "forfeit"
    assert [s.termination for s in result.seats] == ["crashed", "crashed"]


def test_crashed_mid_match() -> None:
    def die(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        table.processes.crash(1, "the process was killed by SIGKILL", stderr="ZeroDivisionError: boom\n")

    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, die)), table, Reason.CRASHED)
    assert detail == "the process was killed by SIGKILL: ZeroDivisionError: boom"
    (forfeit,) = table.match.forfeits.values()
    assert forfeit.evidence["stderr_tail"] == "ZeroDivisionError: boom\n"


def test_the_other_seats_are_told_a_crash_without_the_bots_stderr() -> None:
    """A bot's stderr is its owner's: the seats it played against get the crash's line without
    what it printed (a bot could otherwise collect its opponents' secrets from their stderr); the
    record and the scheduler's result keep it whole."""

    def die(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        table.processes.crash(1, stderr="RuntimeError: password=hunter2\n")

    table = FakeTable()
    result = run(table, at(AT, die))
    assert result.seats[1].detail == "the process exited with status 1: RuntimeError: password=hunter2"
    (told,) = table.channel(0).results
    assert [line.detail for line in told.seats] == [
        "",
        "the process exited with status 1 (the bot's last stderr line is shown to its owner)",
    ]
    assert "hunter2" not in repr(table.channel(0).sent)


def test_crashed_found_when_the_stream_ends() -> None:
    """The stream ends first; the process, probed after settling, has exited: crashed."""

    def die(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        table.processes.status[1] = (Reason.CRASHED, "the process exited with status 3")
        table.processes.stderr[1] = "RuntimeError: gone\n"
        channel.close(detail="stream error UNAVAILABLE: socket closed")

    table = FakeTable()
    detail = forfeit_of(run(table, at(AT, die)), table, Reason.CRASHED)
    stream = "stream error UNAVAILABLE: socket closed"
    assert detail == f"the process exited with status 3: RuntimeError: gone (stream: {stream})"
    assert table.processes.settled == [1]


def test_no_show() -> None:
    table = FakeTable(connect_timeout=0.05)
    detail = forfeit_of(run(table, greedy, absent=(1,)), table, Reason.NO_SHOW)
    assert detail == "did not connect within 0.05s"


def test_late_comer_after_no_show_is_told_and_ended() -> None:
    """A seat that connects after its no-show forfeit is sent its result and its stream ends."""
    table = FakeTable(connect_timeout=0.05)
    run(table, greedy, absent=(1,))
    late = table.attach(1)
    assert late.finished and [s.termination for s in late.results[0].seats] == ["no-show"]


# ---------------------------------------------------------------------- reconnection


# longer than the seat's whole budget below (charged, it would be a timeout); the budget is not
# tighter than 1 s: with 0.2 s, a loaded CI machine once took 0.36 s to answer the request asked
# again after the return, and the seat timed out
AWAY = 1.5


def drop_and_return(after: float) -> Act:
    def drop(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.close(detail="connection reset (fake)")
        asyncio.get_running_loop().call_later(after, table.reconnect, 1)

    return drop


def test_reconnect_within_grace() -> None:
    """Back within the grace: no forfeit; the Welcome and the unanswered request come again; the
    decision's record line holds the time away apart from the think time."""
    table = FakeTable(control=TimeControl(move_time=0.5, bank=0.5), grace=5.0)
    result = run(table, at(AT, drop_and_return(AWAY)))
    assert result.forfeits == ()
    first, second = table.channels[1]
    assert first.finished  # the dropped stream was ended
    assert [w.seat for w in second.welcomes] == [1]
    asked, again = first.requests[-1], second.requests[0]
    # the same request, asked again: its time is what was left when the stream dropped (the
    # milliseconds the drop took on a loaded machine, 499 for 500 once, are charged; the time away is not)
    assert dataclasses.replace(again, move_time_ms=asked.move_time_ms) == asked
    assert asked.move_time_ms - 100 <= again.move_time_ms <= asked.move_time_ms
    (line,) = [e for e in replay(result.replay).events if "away_ms" in e]
    assert line["seat"] == 1 and line["away_ms"] >= AWAY * 1000 * 0.9
    assert line["ms"] < line["away_ms"]
    assert result.seats[1].think_max < AWAY  # the 1 s budget was not charged the time away


def test_reconnect_after_grace() -> None:
    table = FakeTable(grace=0.03)

    def drop(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.close(detail="connection reset (fake)")

    detail = forfeit_of(run(table, at(AT, drop)), table, Reason.DISCONNECTED)
    assert detail == "lost the connection (connection reset (fake)) and did not reconnect within 0.03s"
    assert not table.match.can_reattach(1)
    with pytest.raises(RuntimeError, match="cannot reconnect"):
        table.reconnect(1)


def test_away_while_idle_past_grace() -> None:
    """A seat that drops between its turns and stays away past its grace forfeits before its
    next request."""

    async def leave(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.answer(request.request_id, greedy_text(request))
        channel.close(detail="connection reset (fake)")
        await asyncio.sleep(0.05)  # seat 0's turns go by meanwhile

    table = FakeTable(grace=0.01)
    detail = forfeit_of(run(table, at(AT, leave)), table, Reason.DISCONNECTED)
    assert "reconnect within 0.01s" in detail


# ---------------------------------------------------------------------- completeness

COVERED = {
    Reason.TIMEOUT: test_timeout,
    Reason.ILLEGAL_ACTION: test_illegal_action,
    Reason.MALFORMED_ACTION: test_malformed_action,
    Reason.DISCONNECTED: test_disconnected,
    Reason.CRASHED: test_crashed_mid_match,
    Reason.STALLED: test_stalled_at_the_deadline,
    Reason.NO_SHOW: test_no_show,
}


def test_every_forfeit_reason_has_a_test() -> None:
    """A new forfeit reason needs its fake-channel test here."""
    missing = [str(r) for r in Reason if r not in COVERED]
    assert not missing, f"forfeit reasons without a test in {__name__}: {missing}"
