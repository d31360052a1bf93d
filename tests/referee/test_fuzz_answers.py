"""Item 6 (b): the referee's answer path is total.  Whatever a seat sends (arbitrary BotMessages,
arbitrary bytes through the server's own deserializer, arbitrary request ids, arbitrary action
text, at arbitrary moments), the real Match ends with a legal move or a forfeit with evidence,
never an exception; in memory through the fake channel (fast), and over a real gRPC socket."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee import Reason
from arena.referee import match as match_module
from arena.referee.channel import Request
from arena.referee.fakechannel import FakeChannel, FakeTable, greedy, greedy_text
from arena.v1 import arena_pb2 as pb

from .fuzz_targets import PLANS, RAW_BLOBS, GrpcRig, Plan, check_answers, check_result, fuzz_settings


@fuzz_settings(150)
@given(PLANS, st.integers(0, 1), st.integers(0, 2**20))
def test_answer_path_is_total(plans: list[Plan], fuzzed: int, seed: int) -> None:
    check_answers(plans, fuzzed, seed)


@pytest.fixture(scope="module")
def rig() -> Iterator[GrpcRig]:
    rig = GrpcRig()
    yield rig
    rig.close()


@fuzz_settings(25)
@given(blobs=RAW_BLOBS, seed=st.integers(0, 2**20))
def test_raw_bytes_over_real_grpc(rig: GrpcRig, blobs: list[bytes], seed: int) -> None:
    rig.check_raw_bytes(blobs, seed)


def test_five_thousand_digits_over_real_grpc(rig: GrpcRig) -> None:
    """The issue's crash: `keep green=` and 5,000 digits made `arena match` exit with a
    ValueError; now it is a malformed-action forfeit and the match completes."""
    text = "keep green=" + "1" * 5000
    blob = pb.BotMessage(action=pb.ActionReply(request_id=1, action=text)).SerializeToString()
    rig.check_raw_bytes([blob], seed=3)  # seat 0's first request has id 1


def test_huge_count_forfeits_as_malformed() -> None:
    async def digits(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.answer(request.request_id, "keep green=" + "1" * 5000)

    result = asyncio.run(FakeTable().play([greedy, digits]))
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1 and forfeit.reason is Reason.MALFORMED_ACTION
    assert "count for green" in forfeit.detail
    check_result(result, 1)


def test_an_internal_error_is_a_logged_forfeit(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Should judging a message ever raise (an arena bug), the seat forfeits as malformed-action
    with the exception in the detail, the bug is logged, and the match still completes."""

    def broken(*args: object) -> None:
        raise RuntimeError("judge exploded")

    monkeypatch.setattr(match_module, "judge", broken)
    with caplog.at_level(logging.ERROR, logger="arena.referee.match"):
        result = asyncio.run(FakeTable().play([greedy, greedy]))
    (forfeit,) = result.forfeits
    assert forfeit.seat == 0 and forfeit.reason is Reason.MALFORMED_ACTION
    assert "arena bug" in forfeit.detail and "judge exploded" in forfeit.detail
    assert any("arena bug" in r.getMessage() for r in caplog.records)
    assert result.termination == "forfeit"


@pytest.mark.parametrize("offset", [1, 2, 5])
def test_answer_for_a_request_not_yet_sent_is_malformed(offset: int) -> None:
    """Item 7: seat 0 answers request 1 and at once sends an answer for a later id (offset 1: its
    very next request, 3).  When request 3 is issued, the waiting message is not taken as its
    answer: the id had not been sent when the message arrived, which is malformed-action
    (proto/README.md §8).  The old referee accepted it as the answer to 3, in 0.02 ms."""
    sent_early: list[int] = []

    async def eager(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.answer(request.request_id, greedy_text(request))
        if not sent_early:
            future = request.request_id + offset * 2  # seat 0's requests are 1, 3, 5, ... in set-up
            sent_early.append(future)
            channel.answer(future, "place purple-4")

    async def other(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        legal = [a for a in request.legal_actions if a != "place purple-4"]
        channel.answer(request.request_id, legal[0])

    table = FakeTable()
    result = asyncio.run(table.play([eager, other]))
    (forfeit,) = result.forfeits
    assert forfeit.seat == 0 and forfeit.reason is Reason.MALFORMED_ACTION, forfeit
    assert f"answered request {sent_early[0]}" in forfeit.detail
    assert "never sent" in forfeit.detail
    requests = [r.request_id for r in table.channel(0).requests]
    assert requests == [1, 3]  # judged at the seat's next request (offset 1: the very request it named)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_line_separators_in_a_bot_text_keep_the_record_readable(separator: str) -> None:
    """Found by the fuzzer: a bot's last message (forfeit evidence) holding U+2028 was written raw
    into the result line, and the replay no longer read back (it split the line there)."""

    async def sneaky(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        channel.answer(request.request_id, f"place{separator}green-4a")

    result = asyncio.run(FakeTable().play([sneaky, greedy]))
    (forfeit,) = result.forfeits
    assert forfeit.reason is Reason.MALFORMED_ACTION
    assert forfeit.evidence["last_message"] == f"place{separator}green-4a"
    assert len(result.replay.splitlines()) == len(result.replay.split("\n")) - 1  # no line split inside
    check_result(result, 0)
