"""The bridge: a person's seat as an ordinary gRPC client of the referee, driven by a web page.

:class:`HumanBridge` opens the seat's ``arena.v1.Referee/Play`` stream with the seat's session
token, like any bot (the SDK does the same), and keeps it for the whole match.  What the referee
sends is kept for the page: the game so far (:class:`~arena.humanseat.timeline.Timeline`), the
current request (its id, legal actions and clock) and the result.  What the page posts goes
through :meth:`HumanBridge.submit`, which answers every bad post with a precise
:class:`PostError` (an HTTP status and a message) and forwards only a legal answer to the
current request, once:

* a wrong key (a forged post): 403, nothing is sent;
* a post naming another seat: 403, nothing is sent;
* an answer to a request that was already answered (a double click, a replayed post) or to an
  older request: 409, nothing is sent (the protocol ignores such answers too);
* a request id that was never sent: 409, nothing is sent (the referee would judge it
  ``malformed-action``: the page must not forfeit a person for a forged id);
* text that is not one of the request's legal actions: 422, nothing is sent;
* after the match (or the seat's forfeit): 409.

The referee still judges every answer it gets, exactly as for a bot.

Presence and the reconnect grace: the page holds an event stream open (or polls); when no page
has been there for ``grace`` seconds (``open_wait`` before the page was first opened), the bridge
ends its stream, and the referee records the seat's forfeit as ``disconnected``.  A page that
comes back within the grace finds the seat as it was: the bridge never dropped the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import Message

from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import by_version
from arena.v1 import arena_pb2 as pb

from .timeline import Timeline, TimelineError, options

TOKEN_KEY = "arena-token"
PLAY_METHOD = "/arena.v1.Referee/Play"
log = logging.getLogger(__name__)

POLL_PRESENCE = 4.0  # seconds a poll of the state counts as the page being there


class PostError(Exception):
    """A post the bridge refuses: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Pending:
    """The referee's current request to the seat."""

    request_id: int
    legal: tuple[str, ...]
    move_time_ms: int
    bank_ms: int
    received: float  # time.monotonic() when it arrived
    unlimited: bool

    def left_ms(self, now: float | None = None) -> int | None:
        """Milliseconds left for this decision (move time + bank), None without a clock."""
        if self.unlimited:
            return None
        used = ((time.monotonic() if now is None else now) - self.received) * 1000
        return max(0, round(self.move_time_ms + self.bank_ms - used))


class HumanBridge:
    """One person's seat: the gRPC stream to the referee and what the page may see and send.

    ``key`` is the seat's secret (the page's link carries it); ``grace`` the seconds a closed page
    may take to come back; ``open_wait`` the seconds the page may take to be opened at all;
    ``on_leave(why)`` is told why the seat gives up (the page never opened, or left too long).
    Run :meth:`run` as a task; everything else is called from the same event loop.
    """

    def __init__(
        self,
        address: str,
        token: str,
        *,
        name: str = "human",
        key: str | None = None,
        grace: float = 30.0,
        open_wait: float = 300.0,
        on_leave: Callable[[str], None] | None = None,
    ) -> None:
        self.address = address
        self.token = token
        self.name = name
        self.key = key or secrets.token_urlsafe(24)
        self.grace = grace
        self.open_wait = open_wait
        self.on_leave = on_leave
        self.seat = -1
        self.players = 0
        self.seating: tuple[str, ...] = ()
        self.match_id = ""
        self.rules = DEFAULT_RULES
        self.unlimited = False
        self.time_control = ""
        self.timeline: Timeline | None = None
        self.pending: Pending | None = None
        self.answered: set[int] = set()  # request ids answered (a second post of one is refused)
        self.sent_ids: set[int] = set()  # every request id the referee sent to this seat
        self.result: dict[str, Any] | None = None  # this seat's result as the referee told it
        self.final: dict[str, Any] | None = None  # set by the session: the stored match and its end
        self.ended = asyncio.Event()  # the stream is over (result, goodbye, or it broke)
        self.error = ""  # why the stream ended abnormally
        self.left = ""  # set when the bridge ended the stream because the page stayed away
        self.version = 0  # bumped on every change the page should see
        self._changed = asyncio.Event()
        self._call: Any = None
        self._streams = 0  # event streams the page holds open
        self._polled = 0.0  # time.monotonic() of the latest poll
        self._seen = False  # a page has been here at least once
        self._absent_since: float | None = time.monotonic()
        self._write_lock = asyncio.Lock()

    # ------------------------------------------------------------------ the stream

    async def run(self) -> None:
        """Play the seat's stream to its end; watch the page's presence meanwhile."""
        watch = asyncio.create_task(self._watch_presence())
        try:
            async with grpc.aio.insecure_channel(self.address) as channel:
                stub = channel.stream_stream(
                    PLAY_METHOD,
                    request_serializer=pb.BotMessage.SerializeToString,
                    response_deserializer=pb.RefereeMessage.FromString,
                )
                self._call = stub(metadata=((TOKEN_KEY, self.token),))
                await self._read(self._call)
        except grpc.aio.AioRpcError as exc:
            if not self.left and exc.code() != grpc.StatusCode.CANCELLED:
                self.error = f"{exc.code().name}: {exc.details()}"
        except Exception as exc:  # an arena bug (e.g. a timeline out of step): the stream ends,
            log.exception("the human seat's bridge failed")  # the referee records the seat's loss
            self.error = f"the page's bridge failed (an arena bug, logged): {exc!r}"[:300]
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
            self.pending = None
            self.ended.set()
            self._bump()

    async def _read(self, call: Any) -> None:
        while True:
            message = await call.read()
            if not isinstance(message, pb.RefereeMessage):  # grpc.aio.EOF: the stream is over
                return
            kind = message.WhichOneof("message")
            if kind == "welcome":
                self._welcome(message.welcome)
                await self._write(pb.BotMessage(hello=pb.Hello(name=self.name, version="browser")))
            elif kind == "request":
                self._request(message.request)
            elif kind == "result":
                self._result(message.result)
            self._bump()

    def _welcome(self, w: pb.Welcome) -> None:
        fresh = self.timeline is None or w.match_id != self.match_id
        self.seat, self.players, self.match_id = w.seat, w.players, w.match_id
        self.seating = tuple(w.seating)
        self.rules = by_version(w.rules_version or DEFAULT_RULES.version)
        tc = w.time_control
        self.unlimited = tc.unlimited
        self.time_control = (
            "no time limit"
            if tc.unlimited
            else f"{tc.move_time_ms / 1000:g} s per decision"
            + (f" + {tc.bank_ms / 1000:g} s bank" if tc.bank_ms else "")
        )
        if fresh:
            self.timeline = Timeline(self.players, self.rules)

    def _request(self, r: pb.DecisionRequest) -> None:
        timeline = self.timeline
        assert timeline is not None, "a request before the Welcome"
        for e in r.events:
            if e.WhichOneof("event") == "throw":
                timeline.add_throw(e.throw)
            else:
                a = e.action
                timeline.add_action(a.seat, a.action, forced=a.forced, automatic=a.automatic)
        if timeline.state.seat != self.seat:
            raise TimelineError(
                f"a request for seat {self.seat} in a state where seat {timeline.state.seat} acts"
            )
        self.sent_ids.add(r.request_id)
        self.pending = Pending(
            r.request_id,
            tuple(r.legal_actions),
            r.move_time_ms,
            r.bank_ms,
            time.monotonic(),
            self.unlimited,
        )

    def _result(self, r: pb.MatchResult) -> None:
        self.pending = None
        self.result = {
            "match_id": r.match_id,
            "seats": [
                {
                    "seat": s.seat,
                    "score": s.score,
                    "placing": s.placing,
                    "termination": s.termination,
                    "detail": s.detail,
                }
                for s in r.seats
            ],
        }

    async def _write(self, message: Message) -> None:
        async with self._write_lock:
            await self._call.write(message)

    # ------------------------------------------------------------------ the page's posts

    def check_key(self, key: str | None) -> None:
        """:class:`PostError` 403 unless ``key`` is this seat's secret (a string: a post's JSON may
        give anything)."""
        if not isinstance(key, str) or not key or not secrets.compare_digest(key.encode(), self.key.encode()):
            raise PostError(
                403,
                "bad-key",
                "wrong or missing key: use this seat's link ('arena play' prints it; on an arena server, "
                "its player opens it signed in)",
            )

    async def submit(self, key: str | None, seat: int | None, request_id: int, action: str) -> None:
        """Answer the current request with ``action`` (see the module docstring for every refusal)."""
        self.check_key(key)
        if seat is not None and seat != self.seat:
            raise PostError(
                403,
                "wrong-seat",
                f"this page plays seat {self.seat}, not seat {seat}: an action for another seat",
            )
        pending = self.pending
        if request_id in self.answered:
            raise PostError(
                409,
                "already-answered",
                f"request {request_id} was already answered (a second post is ignored)",
            )
        if self.ended.is_set() or self.result is not None:
            raise PostError(409, "over", "the match is over for this seat: no action is due")
        if request_id not in self.sent_ids:
            raise PostError(
                409, "unknown-request", f"request {request_id} was never sent to this seat: nothing was sent"
            )
        if pending is None or request_id != pending.request_id:
            current = "none" if pending is None else str(pending.request_id)
            raise PostError(
                409, "stale", f"request {request_id} is not the current one (current: {current}): ignored"
            )
        if action not in pending.legal:
            raise PostError(
                422, "not-legal", f"{action!r} is not a legal action now; legal: {', '.join(pending.legal)}"
            )
        self.answered.add(request_id)  # before the write: a concurrent second post is refused
        self.pending = None
        self._bump()
        try:
            await self._write(pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action)))
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, RuntimeError) as exc:
            raise PostError(409, "over", f"the match is over for this seat ({exc})") from None

    # ------------------------------------------------------------------ presence

    def page_opened(self) -> None:
        """An event stream of the page opened (the page is here)."""
        self._streams += 1
        self._seen = True
        self._absent_since = None
        self._bump()

    def page_closed(self) -> None:
        """An event stream of the page closed; the grace starts when none is left."""
        self._streams = max(0, self._streams - 1)
        if self._streams == 0:
            self._absent_since = time.monotonic()

    def page_polled(self) -> None:
        """The page polled the state (counts as presence for :data:`POLL_PRESENCE` seconds)."""
        self._seen = True
        self._polled = time.monotonic()

    def away_for(self, now: float | None = None) -> float:
        """Seconds since the page was last here (0 while it is)."""
        now = time.monotonic() if now is None else now
        if self._streams > 0 or now - self._polled < POLL_PRESENCE:
            return 0.0
        since = self._absent_since if self._absent_since is not None else now
        return max(0.0, now - max(since, self._polled))

    async def _watch_presence(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            limit = self.grace if self._seen else self.open_wait
            away = self.away_for()
            if away > limit and self.result is None:
                await self.abandon(
                    f"the page was closed for over {limit:g} s"
                    if self._seen
                    else f"the page was not opened within {limit:g} s"
                )
                return

    async def abandon(self, why: str) -> None:
        """End the seat's stream (the referee records ``disconnected``, with ``why`` as its detail
        when ``on_leave`` passes it on); keep reading its answer."""
        self.left = why
        if self.on_leave is not None:
            self.on_leave(why)
        self._bump()
        call = self._call
        if call is None:
            return
        try:
            await asyncio.wait_for(call.done_writing(), 5.0)
        except Exception:
            call.cancel()

    # ------------------------------------------------------------------ what the page sees

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self, version: int, timeout: float) -> bool:
        """Wait until :attr:`version` moves past ``version`` (True) or ``timeout`` passes (False)."""
        if self.version != version:
            return True
        event = self._changed
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def snapshot(self, since: int = 0) -> dict[str, Any]:
        """What the page needs, as JSON data: the events after ``since`` (and their states), the
        current request with what each legal action would do and score, the clock, the result."""
        timeline = self.timeline
        states: list[dict[str, Any]] = []
        events: list[dict[str, Any]] = []
        count = 0
        if timeline is not None:
            states, events = timeline.view_since(since)
            count = len(timeline.events)
        pending = self.pending
        request = None
        if pending is not None and timeline is not None:
            request = {
                "id": pending.request_id,
                "phase": timeline.state.phase.label,
                "legal": list(pending.legal),
                "options": options(timeline.state, pending.legal),
                "left_ms": pending.left_ms(),
                "move_time_ms": pending.move_time_ms,
                "bank_ms": pending.bank_ms,
            }
        return {
            "version": self.version,
            "seat": self.seat,
            "players": self.players,
            "seating": list(self.seating),
            "match_id": self.match_id,
            "time_control": self.time_control,
            "since": max(0, min(since, count)),
            "count": count,
            "states": states,
            "events": events,
            "request": request,
            "result": self.result,
            "final": self.final,
            "ended": self.ended.is_set(),
            "left": self.left,
            "error": self.error,
            "grace_s": self.grace,
        }
