"""The gRPC side of the seam: protobuf to and from the channel's plain values, and the
:class:`~arena.referee.channel.SeatChannel` of one gRPC stream.

Only this module (and the server that uses it) knows ``arena.v1``; the match sees
:mod:`arena.referee.channel` values.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable

from google.protobuf.message import DecodeError

from arena.v1 import arena_pb2 as pb
from arena.wire import LOUNGER_NAMES, PROTOCOL, TRACK, state_to_pb

from .channel import (
    ActionEvent,
    Answer,
    Event,
    Garbage,
    Goodbye,
    Hello,
    Message,
    Outgoing,
    Ready,
    Request,
    Result,
    Unexpected,
    Welcome,
)
from .timecontrol import TimeControl

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------- from the bot


def message_from_pb(message: pb.BotMessage) -> Message:
    """The channel value of a BotMessage (a message without a known member is :class:`Unexpected`)."""
    which = message.WhichOneof("message")
    if which == "action":
        return Answer(message.action.request_id, message.action.action)
    if which == "hello":
        return Hello(message.hello.name, message.hello.version)
    if which == "ready":
        return Ready()
    return Unexpected(which)


def parser(limit: int) -> Callable[[bytes], Message | Garbage]:
    """The request deserializer: total, any bytes give a message or :class:`Garbage`."""

    def parse(data: bytes) -> Message | Garbage:
        try:
            if len(data) > limit:
                return Garbage(len(data), f"a message of {len(data)} bytes is over the {limit}-byte limit")
            return _parse(data)
        except Exception as exc:  # never let a bot's bytes break the stream: they are garbage
            log.exception("arena bug: parsing a %d-byte message raised", len(data))
            return Garbage(len(data), f"unreadable ({exc!r})"[:300])

    return parse


def _parse(data: bytes) -> Message | Garbage:
    msg = pb.BotMessage()
    try:
        msg.ParseFromString(data)
    except DecodeError as exc:
        return Garbage(len(data), str(exc) or "undecodable protobuf")
    return message_from_pb(msg)


# ---------------------------------------------------------------------- to the bot


def time_control_to_pb(control: TimeControl) -> pb.TimeControl:
    """The protocol TimeControl (milliseconds; ``unlimited`` alone when there is no clock)."""
    if control.unlimited:
        return pb.TimeControl(unlimited=True)
    return pb.TimeControl(move_time_ms=round(control.move_time * 1000), bank_ms=round(control.bank * 1000))


def welcome_to_pb(welcome: Welcome) -> pb.Welcome:
    """The protocol Welcome (the wire constants: protocol, lounger names, track, are added here)."""
    return pb.Welcome(
        match_id=welcome.match_id,
        seat=welcome.seat,
        players=welcome.players,
        rules_version=welcome.rules_version,
        time_control=time_control_to_pb(welcome.time_control),
        protocol=PROTOCOL,
        lounger_names=LOUNGER_NAMES,
        track=TRACK,
        seating=welcome.seating,
        bot_seed=welcome.bot_seed,
        setup_ms=welcome.setup_ms,
    )


@functools.lru_cache(maxsize=256)
def event_to_pb(event: Event) -> pb.Event:
    """A game event as the protocol reports it (memoised: an event goes to every seat; the
    message is only ever copied into requests, never changed)."""
    if isinstance(event, ActionEvent):
        return pb.Event(
            action=pb.SeatAction(
                seat=event.seat, action=event.action, forced=event.forced, automatic=event.automatic
            )
        )
    return pb.Event(throw=event.throw)


def request_to_pb(request: Request) -> pb.DecisionRequest:
    """The protocol DecisionRequest."""
    return pb.DecisionRequest(
        request_id=request.request_id,
        state=state_to_pb(request.state),
        legal_actions=request.legal_actions,
        move_time_ms=request.move_time_ms,
        bank_ms=request.bank_ms,
        events=[event_to_pb(e) for e in request.events],
    )


def result_to_pb(result: Result) -> pb.MatchResult:
    """The protocol MatchResult."""
    return pb.MatchResult(
        match_id=result.match_id,
        seats=[
            pb.SeatResult(
                seat=s.seat, score=s.score, placing=s.placing, termination=s.termination, detail=s.detail
            )
            for s in result.seats
        ],
    )


def to_pb(message: Outgoing) -> pb.RefereeMessage:
    """The RefereeMessage carrying ``message``."""
    if isinstance(message, Welcome):
        return pb.RefereeMessage(welcome=welcome_to_pb(message))
    if isinstance(message, Request):
        return pb.RefereeMessage(request=request_to_pb(message))
    if isinstance(message, Result):
        return pb.RefereeMessage(result=result_to_pb(message))
    if isinstance(message, Goodbye):
        return pb.RefereeMessage(goodbye=pb.Goodbye(reason=message.reason))
    raise TypeError(f"not a message for a seat: {message!r}")


# ---------------------------------------------------------------------- the channel


class GrpcSeatChannel:
    """The channel of one gRPC stream: what the match sends is converted at once and queued on
    :attr:`outbox`, which the stream handler writes to the bot (None: end the stream)."""

    def __init__(self) -> None:
        self.outbox: asyncio.Queue[pb.RefereeMessage | None] = asyncio.Queue()
        self.finished = False

    def send(self, message: Outgoing) -> None:
        """Queue ``message`` (dropped once the stream is finished)."""
        if not self.finished:
            self.outbox.put_nowait(to_pb(message))

    def finish(self) -> None:
        """End the stream after what is queued."""
        if not self.finished:
            self.finished = True
            self.outbox.put_nowait(None)
