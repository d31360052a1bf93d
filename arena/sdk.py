"""The Python SDK for bot authors: subclass :class:`Bot`, implement ``choose``, call ``run``.

::

    from arena.sdk import Bot, run

    class MyBot(Bot):
        name = "mine"

        def setup(self, welcome):        # optional: per-match set-up, not charged to any decision
            self.table = build_table(self.players)

        def choose(self, state, legal):
            for event in self.decision.events:   # what happened since my last decision (typed)
                ...
            return self.rng.choice(legal)        # an Action, or its text ("stop", "flip green-4a")

    if __name__ == "__main__":
        run(MyBot())

The SDK connects to the referee (``--address``/``--token`` flags or the ``ARENA_ADDRESS`` and
``ARENA_TOKEN`` environment variables), sends the token, matches request ids, and hands the bot
the engine's own :class:`~arena.engine.State` and legal actions, so the bot can use every engine
helper (``apply``, ``apply_throw``, ``throw_distribution``, ``scores`` ...).

What a bot can read (all set before ``setup`` and ``choose`` run):

- ``self.seat``, ``self.players``, ``self.match_id``, ``self.seating`` (names by seat),
  ``self.time_control`` and ``self.welcome`` (the raw ``Welcome``) for the current match;
- ``self.rules``: the match's :class:`arena.engine.Rules` (standard or a variant, from the
  Welcome's ``rules_version``); every ``state`` handed to ``choose`` carries it too
  (``state.rules.end_unoccupied``, ``state.rules.round_cap``);
- ``self.rng``: a :class:`random.Random` seeded with the match's per-seat ``bot_seed``, so a rerun
  of the match (same seed, same seat) repeats the bot's choices; use it for all randomness;
- ``self.decision`` while ``choose`` runs: a :class:`Decision` with the request id, the move time
  and bank, :meth:`Decision.time_left`, the legal actions, and the events since the previous
  request as :class:`ThrowEvent` and :class:`ActionEvent` values (forced and automatic moves
  flagged).

Set-up: the SDK calls ``on_match_start(welcome)`` and then ``setup(welcome)`` when a match starts,
and only then tells the referee it is ready; the referee sends the match's first request once
every seat is ready (at most ``welcome.setup_ms`` after the Welcome), so that work is not charged
to the first decision.  A bot kept running across matches simply stays in ``run`` until the
referee says goodbye.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from arena.engine import FACES, Action, Rules, State, parse_action
from arena.engine.notation import format_throw, parse_throw
from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import by_version
from arena.v1 import arena_pb2 as pb
from arena.wire import state_from_pb

TOKEN_KEY = "arena-token"
SETUP_KEY = "arena-setup"  # metadata: "ready" promises a Ready after each Welcome
PLAY_METHOD = "/arena.v1.Referee/Play"
PlayStub = grpc.aio.StreamStreamMultiCallable[Message, pb.RefereeMessage]


@dataclass(frozen=True)
class ThrowEvent:
    """A throw of the dice.  ``faces`` are face ids in canonical order (0 green, 1 purple,
    2 yellow, 3 red, 4 blue, 5 lifeguard), the form :func:`arena.engine.apply_throw` takes."""

    faces: tuple[int, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The faces by name: ``("green", "green", "lifeguard")``."""
        return tuple(FACES[f] for f in self.faces)

    @property
    def counts(self) -> tuple[int, ...]:
        """Dice per face (6 counts), the form of ``State.last``."""
        return tuple(self.faces.count(f) for f in range(len(FACES)))

    def __str__(self) -> str:
        return format_throw(self.faces)


@dataclass(frozen=True)
class ActionEvent:
    """A decision of some seat (this bot's own decisions included).

    ``forced``: the referee applied it because it was the only legal action (the seat was not
    asked).  ``automatic``: the referee chose it for a seat that has forfeited (its turns pass).
    """

    seat: int
    action: Action
    forced: bool = False
    automatic: bool = False

    def __str__(self) -> str:
        return f"seat {self.seat}: {self.action}"


Event = ThrowEvent | ActionEvent
"""One thing that happened in the match, in order: a throw or a seat's action."""


def event_from_pb(event: pb.Event) -> Event:
    """The typed form of a protocol ``Event``."""
    if event.WhichOneof("event") == "throw":
        return ThrowEvent(parse_throw(event.throw))
    a = event.action
    return ActionEvent(a.seat, parse_action(a.action), a.forced, a.automatic)


@dataclass(frozen=True)
class MatchClock:
    """The match's time control from the Welcome: seconds per decision and in the bank at the
    start (both 0 when ``unlimited``)."""

    move_time: float = 0.0
    bank: float = 0.0
    unlimited: bool = True

    @classmethod
    def from_pb(cls, tc: pb.TimeControl) -> MatchClock:
        """From the protocol message."""
        return cls(tc.move_time_ms / 1000, tc.bank_ms / 1000, tc.unlimited)


@dataclass
class Decision:
    """What the referee said about the current decision (``self.decision`` while ``choose`` runs).

    ``move_time`` and ``bank`` are the request's clock fields in seconds: the time for this
    decision before the bank is touched, and what is left of the bank (both 0 without limits).
    ``received`` is the ``time.monotonic()`` of the request's arrival: the referee's clock for
    the decision started a little earlier (the transport, well under a millisecond locally).  For
    the match's first request read after set-up hooks that overran ``Welcome.setup_ms`` it is
    when the referee stopped waiting for them, so :meth:`time_left` counts the overrun.
    """

    request_id: int
    move_time: float
    bank: float
    received: float
    events: tuple[Event, ...] = ()  # since this bot's previous request, in order
    legal: tuple[Action, ...] = ()  # the legal actions, in the engine's order
    request: pb.DecisionRequest | None = field(default=None, repr=False)  # the raw request

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

    def deadline(self, *, use_bank: bool = False, margin: float = 0.02) -> float:
        """The ``time.monotonic()`` by which to answer (see :meth:`time_left`); ``inf`` without
        limits."""
        return time.monotonic() + self.time_left(use_bank=use_bank, margin=margin)


class Bot:
    """Base class of a bot.  Override :meth:`choose`; the other hooks are optional."""

    name = "bot"
    version = "1"

    def __init__(self) -> None:
        self.seat = -1
        self.players = 0
        self.match_id = ""
        self.seating: tuple[str, ...] = ()
        self.welcome: pb.Welcome | None = None
        self.time_control = MatchClock()
        self.rules: Rules = DEFAULT_RULES
        self.bot_seed = 0
        self.rng = random.Random(0)
        self.decision: Decision | None = None

    def choose(self, state: State, legal: Sequence[Action]) -> Action | str:
        """Return one of ``legal`` (an Action or its notation) for the state given.  While it
        runs, ``self.decision`` holds the request's clock fields and the events."""
        raise NotImplementedError("a bot must implement choose(state, legal)")

    def on_match_start(self, welcome: pb.Welcome) -> None:
        """Called when a match starts (``self.seat``, ``self.players``, ``self.rng`` ... are set),
        just before :meth:`setup`; like it, not charged to any decision."""

    def setup(self, welcome: pb.Welcome) -> None:
        """Per-match set-up work (tables, opening books, warming caches).  Runs after the Welcome
        and before the referee sends the match's first request; its time is not charged to any
        decision as long as it ends within ``welcome.setup_ms`` (the referee then starts the
        match anyway, and the rest counts against this bot's first decision)."""

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
    connect_wait: float = 10.0  # seconds to keep trying to open the first stream (UNAVAILABLE)


def _arguments(argv: Sequence[str] | None) -> Connection:
    env = os.environ.get
    parser = argparse.ArgumentParser(description="Pool Arena bot")
    parser.add_argument("--address", default=env("ARENA_ADDRESS"), help="referee address")
    parser.add_argument(
        "--token",
        default=env("ARENA_TOKEN"),
        help="session token; the arena passes it only as ARENA_TOKEN (prefer that by hand too: "
        "a command line is readable by every process on the host)",
    )
    parser.add_argument("--tls-ca", default=env("ARENA_TLS_CA"), help="CA certificate (PEM): use TLS")
    parser.add_argument("--tls-server-name", default=env("ARENA_TLS_SERVER_NAME"), help="name in the cert")
    parser.add_argument(
        "--reconnect",
        type=float,
        default=float(env("ARENA_RECONNECT", "0")),
        help="seconds to keep reconnecting when a stream drops mid-match (remote bots)",
    )
    parser.add_argument(
        "--connect-wait",
        type=float,
        default=float(env("ARENA_CONNECT_WAIT", "10")),
        help="seconds to keep trying when the first connection fails (the referee not reachable yet, "
        "or a connection it dropped at once)",
    )
    args, _ = parser.parse_known_args(argv)
    if not args.address or not args.token:
        parser.error(
            "the referee address and token are required (--address or ARENA_ADDRESS; ARENA_TOKEN or --token)"
        )
    return Connection(
        str(args.address),
        str(args.token),
        args.tls_ca,
        args.tls_server_name,
        args.reconnect,
        args.connect_wait,
    )


def run(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Connect and play until the referee says goodbye.  Returns the process exit status and
    exits with it when called as the main entry point (``sys.exit(run(bot))`` is not needed).

    Raises :class:`TypeError` before connecting when ``bot`` is not a :class:`Bot` instance
    (``run(MyBot)`` instead of ``run(MyBot())``) or its class does not override ``choose``."""
    _check_bot(bot)
    code = asyncio.run(_play(bot, _arguments(argv)))
    if argv is None:
        sys.exit(code)
    return code


def play(bot: Bot, address: str, token: str, **options: Any) -> int:
    """Play streams on ``token`` until a goodbye (0) or a refusal (2); ``options`` are the other
    :class:`Connection` fields (``tls_ca``, ``tls_server_name``, ``reconnect``).  Raises
    :class:`TypeError` as :func:`run` does for a bot that cannot play."""
    _check_bot(bot)
    return asyncio.run(_play(bot, Connection(address, token, **options)))


def _check_bot(bot: object) -> None:
    """Refuse, before the bot connects (its process exits, "crashed" with this line), what can
    only fail later with a confusing error: a class instead of an instance (its hooks would be
    called unbound: "on_match_start() missing 1 required positional argument"), anything that
    is not a :class:`Bot`, or a Bot without ``choose`` (a misspelt ``def chose``)."""
    if isinstance(bot, type):
        raise TypeError(f"run() takes a bot instance: run({bot.__name__}()), not the class {bot.__name__}")
    if not isinstance(bot, Bot):
        raise TypeError(
            f"run() takes an instance of a subclass of arena.sdk.Bot, "
            f"not {_shown(bot)} ({type(bot).__name__})"
        )
    if type(bot).choose is Bot.choose:
        raise TypeError(
            f"{type(bot).__name__} does not define choose(self, state, legal): a bot must (is it misspelt?)"
        )


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
        progress = _Progress()
        connect_by, pause = time.monotonic() + conn.connect_wait, 0.05
        while True:
            first = not streams and not progress.in_match
            try:
                done = await _play_stream(bot, stub, conn.token, progress, connect_by if first else None)
                dropped_at = None
            except (_Dropped, grpc.aio.AioRpcError) as exc:
                now = time.monotonic()
                if dropped_at is None and isinstance(exc, _Dropped):
                    dropped_at = now
                if dropped_at is not None and now - dropped_at < conn.reconnect:
                    await asyncio.sleep(0.2)  # the referee keeps our seat for a grace period
                    continue
                rpc = exc if isinstance(exc, grpc.aio.AioRpcError) else None
                unavailable = rpc is not None and rpc.code() == grpc.StatusCode.UNAVAILABLE
                if first and unavailable and now + pause < connect_by:
                    # the referee not reachable yet, or a connection its side dropped at once
                    # (seen under other bots' connection floods: an innocent bot exited 2 and
                    # forfeited as crashed): try again within the wait, as wait-for-ready would
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 1.0)
                    continue
                if isinstance(exc, _Dropped):
                    print(f"arena sdk: the stream dropped mid-match: {exc}", file=sys.stderr)
                    return 3
                if streams and exc.code() == grpc.StatusCode.UNAVAILABLE:
                    return 0  # the referee went away after we played: nothing more to do
                why = f"{exc.code().name}: {exc.details()}"
                if exc.code() == grpc.StatusCode.UNAVAILABLE:
                    why += (
                        " (no referee answered at that address: check it, and that the arena is "
                        "running; a lobby that holds its most connections closes new ones until "
                        "some end: try again shortly)"
                    )
                print(f"arena sdk: the referee refused or dropped the stream: {why}", file=sys.stderr)
                return 2
            streams += 1
            if done:
                return 0


@dataclass
class _Progress:
    """What the SDK remembers across the streams of one bot: the match it is in, if any."""

    match_id: str = ""
    in_match: bool = False


async def _play_stream(
    bot: Bot, stub: PlayStub, token: str, progress: _Progress | None = None, connect_by: float | None = None
) -> bool:
    """One stream (one match).  Returns True when the referee said goodbye; raises _Dropped when
    the stream broke between the Welcome and the result.  With ``connect_by`` (a
    ``time.monotonic()``), a stream not connected by then is cancelled as UNAVAILABLE (a
    connection the listener took but never served held it for good)."""
    progress = progress or _Progress()
    call = stub(metadata=((TOKEN_KEY, token), (SETUP_KEY, "ready")))
    if connect_by is not None:
        try:
            await asyncio.wait_for(call.wait_for_connection(), max(0.1, connect_by - time.monotonic()))
        except TimeoutError:
            call.cancel()
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                details="no connection to the referee within the wait (--connect-wait)",
            ) from None
    # The Hello goes out after the Welcome, not before it: a stream the referee answers with a
    # Goodbye alone may already be finished, and writing into a finished call fails (INTERNAL).
    goodbye = False
    # After set-up hooks that overran Welcome.setup_ms: the time.monotonic() at which the referee
    # stopped waiting and started the match.  The bot's first request may have waited since then
    # with its clock running; the SDK times that decision from there (an upper bound on what the
    # referee charges: a seat asked later had its clock started later).
    first_clock_by: float | None = None
    try:
        while True:
            message = await call.read()
            if not isinstance(message, pb.RefereeMessage):  # grpc.aio.EOF
                break
            kind = message.WhichOneof("message")
            if kind == "request":
                await call.write(_answer(bot, message.request, first_clock_by))
                first_clock_by = None
            elif kind == "welcome":
                w = message.welcome
                welcomed = time.monotonic()
                resumed = progress.in_match and progress.match_id == w.match_id  # a reconnect
                progress.in_match, progress.match_id = True, w.match_id
                await call.write(pb.BotMessage(hello=pb.Hello(name=bot.name, version=bot.version)))
                _start_match(bot, w, fresh=not resumed)
                if not resumed:
                    bot.on_match_start(w)
                    bot.setup(w)
                    if w.setup_ms > 0:  # a referee that offers the wait understands Ready
                        await call.write(pb.BotMessage(ready=pb.Ready()))
                        started = welcomed + w.setup_ms / 1000
                        first_clock_by = started if time.monotonic() > started else None
            elif kind == "result":
                progress.in_match = False
                bot.on_match_end(message.result)
            elif kind == "goodbye":
                goodbye = True
    except grpc.aio.AioRpcError as exc:
        if progress.in_match:
            raise _Dropped(f"{exc.code().name}: {exc.details()}") from None
        raise
    if progress.in_match:
        raise _Dropped("the stream ended before the result")
    with contextlib.suppress(grpc.aio.AioRpcError):
        await call.done_writing()
    return goodbye


def _start_match(bot: Bot, w: pb.Welcome, *, fresh: bool) -> None:
    """Set the bot's per-match attributes from a Welcome (the generator, and ``decision`` to
    None, only for a new match, so that a reconnect does not restart its sequence)."""
    bot.seat, bot.players, bot.match_id = w.seat, w.players, w.match_id
    bot.seating = tuple(w.seating)
    bot.welcome = w
    bot.time_control = MatchClock.from_pb(w.time_control)
    # A referee older than rules versions sends "1" (the standard rules); an id this SDK does not
    # know raises UnknownRulesError: the bot cannot play rules it does not know (update the SDK).
    bot.rules = by_version(w.rules_version or DEFAULT_RULES.version)
    if fresh:
        bot.bot_seed = w.bot_seed
        bot.rng = random.Random(w.bot_seed)
        bot.decision = None  # a kept-running bot's last decision belongs to its previous match


def _answer(bot: Bot, request: pb.DecisionRequest, clock_by: float | None = None) -> pb.BotMessage:
    """Ask the bot for its action on ``request``.  ``clock_by``: the earliest time.monotonic() at
    which the referee's clock for this request can have started, given when it was read late
    (the match's first request after set-up hooks that overran ``setup_ms``); the
    :class:`Decision` is timed from it, so ``time_left()`` counts the overrun, as the referee
    does, instead of promising the full move time."""
    received = time.monotonic()
    if clock_by is not None:
        received = min(received, clock_by)
    state = state_from_pb(request.state, bot.rules)
    legal = tuple(parse_action(a) for a in request.legal_actions)
    events = tuple(event_from_pb(e) for e in request.events)
    bot.decision = Decision(
        request.request_id,
        request.move_time_ms / 1000,
        request.bank_ms / 1000,
        received,
        events,
        legal,
        request,
    )
    action = bot.choose(state, legal)
    if not isinstance(action, Action | str):
        # str() of anything makes some text, which the referee could only judge "malformed
        # action 'None'": say here what the bot did wrong (the bot exits: "crashed", with this line).
        raise TypeError(
            f"{type(bot).__name__}.choose returned {_shown(action)} ({type(action).__name__}): "
            "it must return one of the legal actions it was given (an Action) or its text, "
            "such as 'stop' (did a branch of choose forget its return?)"
        )
    return pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=str(action)))


def _shown(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
