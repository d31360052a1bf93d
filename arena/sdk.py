"""The Python SDK for bot authors: subclass :class:`Bot`, implement ``choose``, call ``run``.

::

    from arena.sdk import Bot, run

    class MyBot(Bot):
        name = "mine"

        def choose(self, state, legal):
            return legal[0]          # an Action, or its text ("stop", "flip green-4a")

    if __name__ == "__main__":
        run(MyBot())

The SDK connects to the referee (``--address``/``--token`` flags or the ``ARENA_ADDRESS`` and
``ARENA_TOKEN`` environment variables), sends the token, matches request ids, and hands the bot
the engine's own :class:`~arena.engine.State` and legal actions, so the bot can use every engine
helper (``apply``, ``apply_throw``, ``throw_distribution``, ``scores`` ...).  While ``choose``
runs, ``self.decision`` tells the time budget.  A bot kept running across matches simply stays
in ``run`` until the referee says goodbye.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from arena.engine import Action, State, parse_action
from arena.v1 import arena_pb2 as pb
from arena.wire import state_from_pb

TOKEN_KEY = "arena-token"
PLAY_METHOD = "/arena.v1.Referee/Play"
PlayStub = grpc.aio.StreamStreamMultiCallable[Message, pb.RefereeMessage]


@dataclass
class Decision:
    """What the referee said about the current decision."""

    request_id: int
    move_time: float  # seconds for this decision before the bank is touched (0 = unlimited)
    bank: float  # seconds left in the bank
    received: float  # time.monotonic() when the request arrived
    events: list[str] = field(default_factory=list)  # since the previous request, in notation

    @property
    def unlimited(self) -> bool:
        """True when the match has no time limits (debug mode)."""
        return self.move_time == 0 and self.bank == 0

    def time_left(self, *, use_bank: bool = False, margin: float = 0.02) -> float:
        """Seconds left for this decision (move time, plus the bank if ``use_bank``), minus a
        safety margin for the trip back; ``inf`` without limits."""
        if self.unlimited:
            return float("inf")
        budget = self.move_time + (self.bank if use_bank else 0.0)
        return budget - margin - (time.monotonic() - self.received)


class Bot:
    """Base class of a bot.  Override :meth:`choose`; the other hooks are optional."""

    name = "bot"
    version = "1"

    def __init__(self) -> None:
        self.seat = -1
        self.players = 0
        self.match_id = ""
        self.decision: Decision | None = None

    def choose(self, state: State, legal: Sequence[Action]) -> Action | str:
        """Return one of ``legal`` (an Action or its notation) for the state given."""
        raise NotImplementedError("a bot must implement choose(state, legal)")

    def on_match_start(self, welcome: pb.Welcome) -> None:
        """Called when a match starts (``self.seat`` and ``self.players`` are set)."""

    def on_match_end(self, result: pb.MatchResult) -> None:
        """Called with the result of a match."""


class ConnectError(RuntimeError):
    """The referee refused the connection (bad token) or could not be reached."""


@dataclass(frozen=True)
class Connection:
    """Where and how to reach the referee."""

    address: str
    token: str
    tls_ca: str | None = None  # PEM file of the CA that signed the referee's certificate
    tls_server_name: str | None = None  # expected name in that certificate (default: the host)
    reconnect: float = 0.0  # seconds to keep trying when a stream drops in the middle of a match


def _arguments(argv: Sequence[str] | None) -> Connection:
    env = os.environ.get
    parser = argparse.ArgumentParser(description="Pool Arena bot")
    parser.add_argument("--address", default=env("ARENA_ADDRESS"), help="referee address")
    parser.add_argument("--token", default=env("ARENA_TOKEN"), help="session token")
    parser.add_argument("--tls-ca", default=env("ARENA_TLS_CA"), help="CA certificate (PEM): use TLS")
    parser.add_argument("--tls-server-name", default=env("ARENA_TLS_SERVER_NAME"), help="name in the cert")
    parser.add_argument(
        "--reconnect",
        type=float,
        default=float(env("ARENA_RECONNECT", "0")),
        help="seconds to keep reconnecting when a stream drops mid-match (remote bots)",
    )
    args, _ = parser.parse_known_args(argv)
    if not args.address or not args.token:
        parser.error("the referee address and token are required (--address/--token or ARENA_ADDRESS/TOKEN)")
    return Connection(str(args.address), str(args.token), args.tls_ca, args.tls_server_name, args.reconnect)


def run(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Connect and play until the referee says goodbye.  Returns the process exit status and
    exits with it when called as the main entry point (``sys.exit(run(bot))`` is not needed)."""
    code = asyncio.run(_play(bot, _arguments(argv)))
    if argv is None:
        sys.exit(code)
    return code


def play(bot: Bot, address: str, token: str, **options: Any) -> int:
    """Play streams on ``token`` until a goodbye (0) or a refusal (2); ``options`` are the other
    :class:`Connection` fields (``tls_ca``, ``tls_server_name``, ``reconnect``)."""
    return asyncio.run(_play(bot, Connection(address, token, **options)))


class _Dropped(Exception):
    """The stream broke in the middle of a match."""


def _channel(conn: Connection) -> grpc.aio.Channel:
    options: list[tuple[str, Any]] = [("grpc.max_receive_message_length", 4 << 20)]
    if conn.tls_ca is None:
        return grpc.aio.insecure_channel(conn.address, options=options)
    with open(conn.tls_ca, "rb") as fh:
        creds = grpc.ssl_channel_credentials(root_certificates=fh.read())
    if conn.tls_server_name:
        options.append(("grpc.ssl_target_name_override", conn.tls_server_name))
    return grpc.aio.secure_channel(conn.address, creds, options=options)


async def _play(bot: Bot, conn: Connection) -> int:
    async with _channel(conn) as channel:
        stub = channel.stream_stream(
            PLAY_METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        streams = 0
        dropped_at: float | None = None
        while True:
            try:
                done = await _play_stream(bot, stub, conn.token)
                dropped_at = None
            except (_Dropped, grpc.aio.AioRpcError) as exc:
                now = time.monotonic()
                if dropped_at is None and isinstance(exc, _Dropped):
                    dropped_at = now
                if dropped_at is not None and now - dropped_at < conn.reconnect:
                    await asyncio.sleep(0.2)  # the referee keeps our seat for a grace period
                    continue
                if isinstance(exc, _Dropped):
                    print(f"arena sdk: the stream dropped mid-match: {exc}", file=sys.stderr)
                    return 3
                if streams and exc.code() == grpc.StatusCode.UNAVAILABLE:
                    return 0  # the referee went away after we played: nothing more to do
                why = f"{exc.code().name}: {exc.details()}"
                print(f"arena sdk: the referee refused or dropped the stream: {why}", file=sys.stderr)
                return 2
            streams += 1
            if done:
                return 0


async def _play_stream(bot: Bot, stub: PlayStub, token: str) -> bool:
    """One stream (one match).  Returns True when the referee said goodbye; raises _Dropped when
    the stream broke between the Welcome and the result."""
    call = stub(metadata=((TOKEN_KEY, token),))
    # The Hello goes out after the Welcome, not before it: a stream the referee answers with a
    # Goodbye alone may already be finished, and writing into a finished call fails (INTERNAL).
    goodbye = False
    in_match = False
    try:
        while True:
            message = await call.read()
            if not isinstance(message, pb.RefereeMessage):  # grpc.aio.EOF
                break
            kind = message.WhichOneof("message")
            if kind == "request":
                await call.write(_answer(bot, message.request))
            elif kind == "welcome":
                in_match = True
                await call.write(pb.BotMessage(hello=pb.Hello(name=bot.name, version=bot.version)))
                w = message.welcome
                bot.seat, bot.players, bot.match_id = w.seat, w.players, w.match_id
                bot.on_match_start(w)
            elif kind == "result":
                in_match = False
                bot.on_match_end(message.result)
            elif kind == "goodbye":
                goodbye = True
    except grpc.aio.AioRpcError as exc:
        if in_match:
            raise _Dropped(f"{exc.code().name}: {exc.details()}") from None
        raise
    if in_match:
        raise _Dropped("the stream ended before the result")
    with contextlib.suppress(grpc.aio.AioRpcError):
        await call.done_writing()
    return goodbye


def _answer(bot: Bot, request: pb.DecisionRequest) -> pb.BotMessage:
    received = time.monotonic()
    state = state_from_pb(request.state)
    legal = tuple(parse_action(a) for a in request.legal_actions)
    events = [
        e.throw if e.WhichOneof("event") == "throw" else f"seat {e.action.seat}: {e.action.action}"
        for e in request.events
    ]
    bot.decision = Decision(
        request.request_id, request.move_time_ms / 1000, request.bank_ms / 1000, received, events
    )
    action = bot.choose(state, legal)
    return pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=str(action)))
