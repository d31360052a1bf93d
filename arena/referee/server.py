"""The referee's gRPC server (grpc.aio): authenticates streams and binds them to match seats.

One server runs any number of matches at once.  Each bot stream presents a session token
(metadata ``arena-token``); the stream is attached to the session's next seat assignment, and
messages flow between the stream and the match through the seam of :mod:`arena.referee.channel`:
a :class:`~arena.referee.grpc_channel.GrpcSeatChannel` towards the bot (protobuf is built there),
the match's :class:`~arena.referee.seatlink.SeatLink` (fed with plain values) from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import resource
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules
from arena.v1 import arena_pb2 as pb

from .authlimit import AuthLimiter, AuthLimits, peer_address, retry_after
from .channel import Closed, CpuFn, EvidenceFn, Garbage, Message, Probe, Settle
from .faults import Reason
from .grpc_channel import GrpcSeatChannel, parser
from .hardening import (
    HANDSHAKE_TIMEOUT_MS,
    IDLE_CONNECTION_MS,
    LISTEN_CONNECTIONS,
    MAX_STREAMS_PER_CONNECTION,
    CheckOnlyHealth,
    listen_cap,
    listen_cap_warning,
    prepare_open_files,
)
from .match import SETUP_TIME, Match
from .refusals import watch_receives
from .result import MatchResult
from .seatlink import SeatLink
from .sessions import BotSession, SessionRegistry
from .timecontrol import SeatClock, TimeControl

log = logging.getLogger(__name__)

SERVICE = "arena.v1.Referee"
TOKEN_KEY = "arena-token"
RETRY_AFTER_KEY = "retry-after"  # trailing metadata of a refusal for too many failures: seconds

InboxItem = Message | Garbage  # what the request deserializer makes of a bot's bytes

GREET_WAIT = 2.0
"""Seconds such a call stays open at most for a Hello alone (sent at once after the Welcome, if at
all: it is optional, and a bot that sends none must not be kept waiting long)."""
OWED_WAIT = SETUP_TIME + 1.0
"""Seconds a call whose match is over stays open for the Hello (and Ready) its bot still owes:
the longest a match waits for a Ready, and one more (:func:`_owed_messages`); longer for a Ready
whose match allows a longer set-up (:func:`ready_allowance`)."""
OWED_READY_CAP = 120.0
"""Seconds at most a finished match's call stays open for a promised Ready (a match without time
limits allows any set-up: this bounds what a bot that never sends its Ready holds open)."""


def ready_allowance(match: Match) -> float:
    """Seconds after its Welcome a seat of ``match`` may send its Ready without being at fault:
    the match waits :attr:`Match.setup_time` for it and then starts anyway, and a set-up that
    overruns that is charged to the seat's first decision, so one within that decision's whole
    budget (move time and bank) costs it nothing worse than think time.  One second more, and
    at most :data:`OWED_READY_CAP`."""
    budget = SeatClock(match.control).wall_budget()
    if budget is None:
        return OWED_READY_CAP
    return min(OWED_READY_CAP, match.setup_time + budget + 1.0)


@dataclass(frozen=True)
class RefereeConfig:
    """Transport settings.

    Message size: a bot's messages are tiny; one over ``max_message_bytes`` is
    ``malformed-action``.  The transport accepts up to ``transport_max_bytes`` so that such a
    message is read and reported with its exact size; gRPC refuses a longer one from its length
    prefix, before buffering it (so one bot costs the referee at most that much memory), and the
    referee notices the refusal (:mod:`arena.referee.refusals`): ``malformed-action`` as well.

    Keepalive: the referee pings every bot's connection after ``keepalive_ms`` without a ping and
    gives up on it when the answer takes over ``keepalive_timeout_ms``.  A bot's gRPC library
    answers pings by itself while its process runs, so an unanswered ping means a frozen process
    (SIGSTOP, a debugger, a machine that went away): the stream is cut and the seat forfeits as
    ``stalled``, noticed within about 4 s (2 + 2) even between its turns, well inside the default
    budget of one decision (1 s + 10 s bank), so a freeze is told apart from a slow answer.

    Idle connections: a connection that carries no stream for ``idle_connection_ms`` is closed
    (HTTP/2 GOAWAY; a gRPC client reconnects by itself on its next call), and one that has not
    finished its handshake (HTTP/2 preface, TLS) within ``handshake_timeout_ms`` is dropped, so
    connections opened and left lying cost the referee nothing for long
    (:mod:`arena.referee.hardening`).  A bot's Play stream keeps its connection busy for the
    whole match, and the SDK opens the next stream as soon as one ends.

    The remote-bot listener (``start(listen=...)``) is a second gRPC server with the same
    service, holding at most ``listen_connections`` connections at once (all clients together;
    one more is closed as soon as it is accepted; fewer when the open-files limit is low:
    :func:`arena.referee.hardening.listen_cap`), so a flood of connections there cannot take the
    open files the local bots, the web app and the database need.
    """

    max_message_bytes: int = 64 * 1024
    transport_max_bytes: int = 4 * 1024 * 1024
    keepalive_ms: int = 2000
    keepalive_timeout_ms: int = 2000
    connect_timeout: float = 20.0  # seconds to connect before a no-show
    idle_connection_ms: int = IDLE_CONNECTION_MS  # a connection without a stream is closed then
    handshake_timeout_ms: int = HANDSHAKE_TIMEOUT_MS  # a handshake not finished by then: dropped
    listen_connections: int = LISTEN_CONNECTIONS  # the remote-bot listener's cap on connections
    # seconds a call whose match is over stays open for the Hello (and Ready) its bot still owes
    owed_wait: float = OWED_WAIT
    reflection: bool = False  # serve gRPC server reflection (debugging)

    def stream_end_detail(self) -> str:
        """The forfeit detail of a stream that just ended while the bot's process (if the referee
        started it) still ran: the bot closed it, or the connection was lost -- most often cut by
        the keepalive because the bot's thinking blocked its gRPC I/O."""
        return (
            "the stream ended: closed by the bot, or the connection was lost (the referee cuts a "
            f"connection whose keepalive ping is not answered within {self.keepalive_timeout_ms / 1000:g} s: "
            "a bot whose thinking blocks its gRPC I/O, as a busy Node.js event loop does, must think "
            "in a worker thread; proto/README.md section 3)"
        )

    def refused_detail(self) -> str:
        """The forfeit detail of a message that gRPC refused."""
        return (
            f"sent a message that the transport refused: over its {self.transport_max_bytes}-byte "
            f"limit (a BotMessage may have at most {self.max_message_bytes} bytes), or not a gRPC message"
        )


@dataclass(frozen=True)
class TlsFiles:
    """A PEM certificate chain and its private key, for the remote-bot listener."""

    cert: Path
    key: Path


def _bound(address: str, port: int) -> str:
    """``address`` with the port the server really bound (port 0 picks one)."""
    if address.startswith("unix:"):
        return address
    return f"{address.rsplit(':', 1)[0]}:{port}"


def _parser(limit: int) -> Callable[[bytes], InboxItem]:
    """The request deserializer: total, any bytes give a message or :class:`Garbage`
    (:func:`arena.referee.grpc_channel.parser`)."""
    return parser(limit)


class RefereeServer:
    """Hosts the Referee service and the gRPC health service; runs matches."""

    def __init__(self, config: RefereeConfig | None = None, *, auth_limits: AuthLimits | None = None) -> None:
        """``auth_limits``: the brake on failed authentications over TCP (default
        :class:`AuthLimits`; Unix-socket streams are never limited)."""
        self.config = config or RefereeConfig()
        self.registry = SessionRegistry()
        self.auth = AuthLimiter(auth_limits)
        self.address = ""
        self.listen_address = ""
        self.listen_connections = 0  # the listener's cap in force (listen_cap), once started
        self._servers: list[grpc.aio.Server] = []
        self._health = CheckOnlyHealth()

    # ------------------------------------------------------------------ lifecycle

    async def start(
        self, address: str = "127.0.0.1:0", *, listen: str | None = None, tls: TlsFiles | None = None
    ) -> str:
        """Bind ``address`` (``host:port``, port 0 picks one, or ``unix:/path``) and serve.

        ``listen`` adds a second address for remote bots (``host:port``), with TLS when ``tls``
        is given (then :attr:`listen_address` holds the bound address).  Returns the address
        local bots should dial.
        """
        c = self.config
        prepare_open_files()  # a bot's many connections cannot crowd its opponent's out
        server = self._new_server([])
        address = _bound(address, server.add_insecure_port(address))
        servers = [server]
        if listen is not None:
            # its own server: the cap on its connections must not count the local bots'
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            self.listen_connections = listen_cap(c.listen_connections, soft)
            warning = listen_cap_warning(c.listen_connections, self.listen_connections, soft)
            if warning is not None:
                log.warning("%s", warning)
            remote = self._new_server([("grpc.max_allowed_incoming_connections", self.listen_connections)])
            if tls is not None:
                creds = grpc.ssl_server_credentials([(tls.key.read_bytes(), tls.cert.read_bytes())])
                self.listen_address = _bound(listen, remote.add_secure_port(listen, creds))
            else:
                self.listen_address = _bound(listen, remote.add_insecure_port(listen))
            servers.append(remote)
        for s in servers:
            await s.start()
        await self._health.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        self._servers = servers
        self.address = address
        return address

    def _new_server(self, extra: list[tuple[str, int]]) -> grpc.aio.Server:
        """A gRPC server with the Referee service, the health service and the transport
        settings of :class:`RefereeConfig` (plus ``extra`` channel arguments), not yet bound."""
        c = self.config
        options = [
            ("grpc.max_receive_message_length", c.transport_max_bytes),
            ("grpc.keepalive_time_ms", c.keepalive_ms),
            ("grpc.keepalive_timeout_ms", c.keepalive_timeout_ms),
            ("grpc.http2.ping_timeout_ms", c.keepalive_timeout_ms),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.http2.min_ping_interval_without_data_ms", 1000),
            ("grpc.so_reuseport", 0),
            ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),  # a bot needs one
            ("grpc.max_connection_idle_ms", c.idle_connection_ms),
            ("grpc.server_handshake_timeout_ms", c.handshake_timeout_ms),
            *extra,
        ]
        server = grpc.aio.server(options=options)
        handler = grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self._play,
                    request_deserializer=_parser(c.max_message_bytes),
                    response_serializer=pb.RefereeMessage.SerializeToString,
                )
            },
        )
        server.add_generic_rpc_handlers((handler,))
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        if c.reflection:  # debug mode: grpcurl and friends can discover the service
            from grpc_reflection.v1alpha import reflection

            names = (pb.DESCRIPTOR.services_by_name["Referee"].full_name, reflection.SERVICE_NAME)
            reflection.enable_server_reflection(names, server)
        return server

    async def add_address(self, address: str) -> str:
        """Also serve on ``address`` (``unix:/path`` or ``host:port``), with the local
        address's settings, and make it the address local bots dial (returned).  The addresses
        already bound keep serving, and the streams on them go on: a host whose socket was
        removed from outside gets a new one without cutting its kept-running bots."""
        if not self._servers:
            raise RuntimeError("add_address needs a started server")
        server = self._new_server([])
        bound = _bound(address, server.add_insecure_port(address))
        await server.start()
        self._servers.append(server)
        self.address = bound
        return bound

    async def stop(self, grace: float = 1.0) -> None:
        """Stop serving; open streams get ``grace`` seconds."""
        if self._servers:
            await self._health.enter_graceful_shutdown()
            servers, self._servers = self._servers, []
            await asyncio.gather(*(s.stop(grace) for s in servers))

    # ------------------------------------------------------------------ sessions and matches

    def session(self, name: str, *, persistent: bool = False) -> BotSession:
        """Mint a session (token) for a bot."""
        return self.registry.mint(name, persistent=persistent)

    def revoke(self, session: BotSession) -> None:
        """Invalidate a session's token; a waiting stream gets a Goodbye."""
        self.registry.revoke(session)

    def forget(self, session: BotSession) -> None:
        """A revoked session whose process has been stopped: it is owed no goodbye any more."""
        self.registry.forget(session)

    async def play(
        self,
        sessions: Sequence[BotSession],
        seed: int,
        control: TimeControl,
        *,
        match_id: str | None = None,
        probe: Probe | None = None,
        evidence: EvidenceFn | None = None,
        settle: Settle | None = None,
        on_event: Callable[[Match], None] | None = None,
        cpu_time: CpuFn | None = None,
        on_start: Callable[[Match], None] | None = None,
        rules: Rules = DEFAULT_RULES,
    ) -> MatchResult:
        """Run one match with ``sessions[k]`` in seat k under ``rules`` (the standard rules unless
        a variant is chosen); per-match sessions are revoked after.

        ``on_start(match)`` is called once the match exists, before it waits for its seats (e.g.
        to tell it when a bot process exits: :meth:`Match.seat_process_exited`)."""
        match = Match(
            [s.name for s in sessions],
            seed,
            control,
            match_id=match_id,
            connect_timeout=self.config.connect_timeout,
            probe=probe,
            evidence=evidence,
            settle=settle,
            cpu_time=cpu_time,
            rules=rules,
        )
        match.on_event = on_event
        if on_start is not None:
            on_start(match)
        for seat, session in enumerate(sessions):
            session.assign(match, seat)
        try:
            return await match.run()
        finally:
            for session in sessions:
                if not session.persistent:
                    self.revoke(session)

    # ------------------------------------------------------------------ the stream handler

    async def _play(
        self,
        requests: AsyncIterator[InboxItem],
        context: grpc.aio.ServicerContext[InboxItem, pb.RefereeMessage],
    ) -> AsyncIterator[pb.RefereeMessage]:
        deadline = _Deadline.of(context)
        metadata = {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}
        token = metadata.get(TOKEN_KEY)
        peer = peer_address(context.peer() or "")  # None: a Unix socket, never limited
        if peer is not None and (wait := self.auth.locked_for(peer)) is not None:
            await _refuse_locked_out(context, wait)
        if not token:
            await self._unauthenticated(
                context, peer, f"missing metadata {TOKEN_KEY!r}: send your session token"
            )
        session = self.registry.lookup(token or "")
        if session is None:
            if self.registry.retired(token or "") is not None:
                # A persistent bot reconnecting after its last match: tell it to leave.
                yield pb.RefereeMessage(goodbye=pb.Goodbye(reason="no further matches for this token"))
                return
            await self._unauthenticated(context, peer, "unknown or expired token")
            return
        if session.stream_open:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, "this token is already in use by another stream"
            )
            return
        session.stream_open = True
        holds = True  # this stream holds the session's one open stream (False: let go early)
        link: SeatLink | None = None
        match: Match | None = None  # the match of this stream's seat
        reader: asyncio.Task[None] | None = None
        channel = GrpcSeatChannel()
        try:
            current = session.current
            if current is not None:
                # its last stream may have ended without the seat hearing yet (gRPC ended the call
                # below the referee, told CALL_END_WAIT later): no stream holds it now, so it is away
                current.match.stream_gone(current.seat)
            if current is not None and current.match.can_reattach(current.seat):
                match = current.match
                link = match.reattach(current.seat, channel)  # a dropped stream comes back
            else:
                # a stream that dropped mid-match left its seat as current: that seat is over now
                # (forfeited, or the match ended), so this session is free for its next match (a
                # remote bot was never scheduled again after a drop longer than its grace)
                session.current = None
                assignment = await session.assignments.get()
                if assignment is None:
                    self.registry.retired(session.token)  # the goodbye is delivered: owed no more
                    yield pb.RefereeMessage(goodbye=pb.Goodbye(reason="no further matches for this token"))
                    return
                session.current = assignment
                # metadata arena-setup: ready = the bot sends a Ready once its match set-up is done
                setup = metadata.get("arena-setup") == "ready"
                match = assignment.match
                link = match.attach(assignment.seat, channel, grace=session.grace, setup=setup)
            reader = asyncio.create_task(self._pump(requests, link, self.config, deadline))
            _watch_call_end(context, link, channel)
            while True:
                message = await channel.outbox.get()
                if message is None:
                    session.current = None  # this seat's match is over
                    break
                yield message
            assert reader is not None and match is not None  # (all set by now)
            if link.owes() and not reader.done():
                # the seat is free for its next match meanwhile (a Hello is optional: a bot that
                # sends none may open its next stream at once, and must not be refused for this one)
                session.stream_open = holds = False
                if link.setup and not link.ready.is_set():
                    # a set-up may overrun the match's wait for it (it is then charged to the first
                    # decision): cut short, such a bot's Ready would fail, and its SDK exit
                    bound = max(self.config.owed_wait, ready_allowance(match))
                else:
                    bound = min(self.config.owed_wait, GREET_WAIT)
                await _owed_messages(link, reader, bound)
            if not session.persistent:
                yield pb.RefereeMessage(goodbye=pb.Goodbye(reason="this token was for one match"))
        except asyncio.CancelledError:
            if link is not None:
                if reader is not None and not reader.done():
                    # the reader may be about to say why the call ended (a refused message)
                    await asyncio.wait({reader}, timeout=0.1)
                link.deliver(
                    Closed(Reason.DISCONNECTED, deadline.passed() or "the connection to the bot was lost")
                )
            raise
        finally:
            if holds:
                session.stream_open = False
            if reader is not None:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader

    async def _unauthenticated(
        self, context: grpc.aio.ServicerContext[InboxItem, pb.RefereeMessage], peer: str | None, why: str
    ) -> NoReturn:
        """Refuse the stream (UNAUTHENTICATED) and, from a TCP peer, count the failure."""
        lockout = self.auth.failure(peer, why) if peer is not None else None
        trailer: tuple[tuple[str, str], ...] = ()
        if lockout is not None:
            why += (
                f"; too many failures from {peer}: further attempts are refused for {retry_after(lockout)} s"
            )
            trailer = ((RETRY_AFTER_KEY, retry_after(lockout)),)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, why, trailer)
        raise AssertionError("abort() returned")  # (it raises)

    @staticmethod
    async def _pump(
        requests: AsyncIterator[InboxItem], link: SeatLink, config: RefereeConfig, deadline: _Deadline
    ) -> None:
        """Read the bot's stream into the link until it ends (one task per stream).  A stream
        that ends because gRPC refused a message (over the transport limit) is
        ``malformed-action``; one that just ends is ``disconnected`` (at the deadline the bot
        gave the call, if it gave one and it has passed) until its process says more."""
        refused = watch_receives()
        try:
            async for item in requests:
                link.deliver(item)
                if link.closed is not None:
                    return
            if refused.failed:
                link.deliver(Closed(Reason.MALFORMED_ACTION, config.refused_detail()))
                return
            link.deliver(Closed(Reason.DISCONNECTED, deadline.passed() or config.stream_end_detail()))
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as exc:
            link.deliver(Closed(_reason_of(exc.code()), f"stream error {exc.code().name}: {exc.details()}"))
        except Exception as exc:  # anything a bot can cause must end as a forfeit, not a crash
            link.deliver(Closed(Reason.DISCONNECTED, f"stream error: {exc!r}"[:300]))


@dataclass(frozen=True)
class _Deadline:
    """The deadline a bot gave its stream's call (``grpc-timeout``), if any: gRPC ends the call
    when it passes, which the referee would otherwise report as a stream that just ended."""

    seconds: float | None  # as the call arrived
    at: float  # time.monotonic() when it passes (inf: none)

    @classmethod
    def of(cls, context: grpc.aio.ServicerContext[InboxItem, pb.RefereeMessage]) -> _Deadline:
        """The deadline of ``context``'s call."""
        left = context.time_remaining()
        if left is None:
            return cls(None, math.inf)
        return cls(left, time.monotonic() + left)

    def passed(self) -> str | None:
        """The forfeit detail of a stream that ended at its own deadline; None when it has none or
        it has not passed (a few milliseconds early count: gRPC may end the call just before)."""
        if self.seconds is None or time.monotonic() < self.at - 0.05:
            return None
        return (
            f"the stream ended at its own deadline: the bot opened it with a gRPC deadline of "
            f"{self.seconds:.1f} s (grpc-timeout; e.g. timeout= in Python); a match's stream must have none"
        )


CALL_ENDED_DETAIL = (
    "the stream ended without the bot closing it: gRPC ended the call below the referee "
    "(a transport error, such as metadata it could not parse, e.g. an unknown grpc-encoding)"
)
CALL_END_WAIT = 0.2  # seconds the stream's reader is given to say first how the stream ended


def _watch_call_end(
    context: grpc.aio.ServicerContext[InboxItem, pb.RefereeMessage], link: SeatLink, channel: GrpcSeatChannel
) -> None:
    """When gRPC ends the call by itself, the seat's stream is over even if its reader never hears
    of it (C-core can answer a call it refused with a trailers-only error and leave the request
    stream open): the link is told ``disconnected`` unless the reader (given
    :data:`CALL_END_WAIT`) or a newer stream of the seat has spoken meanwhile."""
    loop = asyncio.get_running_loop()

    def tell() -> None:
        if link.channel is channel and link.closed is None and link.away_since is None:
            link.deliver(Closed(Reason.DISCONNECTED, CALL_ENDED_DETAIL))

    def ended(_context: grpc.aio.ServicerContext[InboxItem, pb.RefereeMessage]) -> None:
        loop.call_soon_threadsafe(loop.call_later, CALL_END_WAIT, tell)

    context.add_done_callback(ended)  # type: ignore[arg-type]  # (the stubs' callback type is a class)


async def _refuse_locked_out(
    context: grpc.aio.ServicerContext[InboxItem, pb.RefereeMessage], wait: float
) -> NoReturn:
    """Refuse a stream from a locked-out address before its token is looked at."""
    await context.abort(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"too many failed authentications from this address: retry after {retry_after(wait)} s",
        ((RETRY_AFTER_KEY, retry_after(wait)),),
    )
    raise AssertionError("abort() returned")  # (it raises)


def _reason_of(code: grpc.StatusCode) -> Reason:
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return Reason.MALFORMED_ACTION
    return Reason.DISCONNECTED


async def _owed_messages(link: SeatLink, reader: asyncio.Task[None], bound: float) -> None:
    """Before a seat's call is ended: wait, at most ``bound`` seconds, for what its bot still
    owes since the Welcome (its Hello; its Ready when it promised one), or for its stream to end.

    A match can end while a bot is still in its set-up: another seat crashed before it
    connected, say. Ending the call then made the bot's Hello or Ready a write into a finished
    call, which gRPC fails (INTERNAL) and which also loses the result already sent: the SDK
    took that for a stream dropped mid-match, and a kept-running bot exited at once, to be
    found dead at the start of its next match and charged a ``crashed`` forfeit there."""
    owed = link.owes()
    if not owed or reader.done():
        return

    async def all_arrived() -> None:
        for event in owed:
            await event.wait()

    arrived = asyncio.create_task(all_arrived())
    try:
        await asyncio.wait({arrived, reader}, timeout=bound, return_when=asyncio.FIRST_COMPLETED)
    finally:
        arrived.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await arrived
