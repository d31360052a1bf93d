"""The seam between the match and the wire: the match and the in-memory seats load without
protobuf or gRPC, and the gRPC side converts every channel value to and from protobuf."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.engine import legal_actions, new_game
from arena.referee import TimeControl
from arena.referee.channel import (
    ActionEvent,
    Answer,
    Garbage,
    Goodbye,
    Hello,
    Ready,
    Request,
    Result,
    SeatLine,
    ThrowEvent,
    Unexpected,
    Welcome,
)
from arena.referee.grpc_channel import GrpcSeatChannel, message_from_pb, parser, to_pb
from arena.v1 import arena_pb2 as pb
from arena.wire import LOUNGER_NAMES, PROTOCOL, state_from_pb


def test_the_match_does_not_load_the_wire() -> None:
    code = (
        "import sys, arena.referee.match, arena.referee.fakechannel\n"
        "wire = [m for m in sys.modules if m.split('.')[0] in ('grpc', 'google')"
        " or m.startswith('arena.v1')]\n"
        "assert not wire, wire\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_outgoing_values_become_referee_messages() -> None:
    control = TimeControl(move_time=0.5, bank=3.0)
    welcome = to_pb(Welcome("m1", 1, 2, "1", control, ("a", "b"), 99, 5000)).welcome
    assert (welcome.match_id, welcome.seat, welcome.players, welcome.rules_version) == ("m1", 1, 2, "1")
    assert (welcome.time_control.move_time_ms, welcome.time_control.bank_ms) == (500, 3000)
    assert welcome.protocol == PROTOCOL and tuple(welcome.lounger_names) == LOUNGER_NAMES
    assert (list(welcome.seating), welcome.bot_seed, welcome.setup_ms) == (["a", "b"], 99, 5000)
    unlimited = to_pb(Welcome("m", 0, 2, "1", TimeControl(unlimited=True), ("a", "b"), 1, 0)).welcome
    assert unlimited.time_control.unlimited

    state = new_game(2)
    legal = tuple(str(a) for a in legal_actions(state))
    events = (ThrowEvent("1 2 3"), ActionEvent(0, "stop", forced=True))
    request = to_pb(Request(7, state, legal, 500, 3000, events)).request
    assert (request.request_id, tuple(request.legal_actions), request.bank_ms) == (7, legal, 3000)
    assert state_from_pb(request.state).seat == state.seat
    assert request.events[0].throw == "1 2 3"
    assert (request.events[1].action.action, request.events[1].action.forced) == ("stop", True)

    result = to_pb(Result("m1", (SeatLine(1, 12, 2, "timeout", "slow"),))).result
    assert [(s.seat, s.score, s.placing, s.termination, s.detail) for s in result.seats] == [
        (1, 12, 2, "timeout", "slow")
    ]
    assert to_pb(Goodbye("bye")).goodbye.reason == "bye"


@pytest.mark.parametrize(
    ("message", "value"),
    [
        (pb.BotMessage(action=pb.ActionReply(request_id=3, action="stop")), Answer(3, "stop")),
        (pb.BotMessage(hello=pb.Hello(name="n", version="v")), Hello("n", "v")),
        (pb.BotMessage(ready=pb.Ready()), Ready()),
        (pb.BotMessage(), Unexpected(None)),
    ],
)
def test_bot_messages_become_channel_values(message: pb.BotMessage, value: object) -> None:
    assert message_from_pb(message) == value
    assert parser(1000)(message.SerializeToString()) == value


def test_bytes_that_are_no_message_are_garbage() -> None:
    parse = parser(10)
    bad = parse(b"\xff\xff\xff")
    assert isinstance(bad, Garbage) and bad.size == 3 and bad.error
    over = parse(b"x" * 11)
    assert isinstance(over, Garbage) and "over the 10-byte limit" in over.error


def test_the_grpc_channel_queues_until_finished() -> None:
    channel = GrpcSeatChannel()
    channel.send(Goodbye("one"))
    channel.finish()
    channel.send(Goodbye("dropped"))
    channel.finish()
    first = channel.outbox.get_nowait()
    assert first is not None and first.goodbye.reason == "one"
    assert channel.outbox.get_nowait() is None and channel.outbox.empty()
