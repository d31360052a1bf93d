"""One match: seats, clocks, deadlines, forfeits and the event log.

The match talks to each seat through a :class:`SeatLink`: the gRPC handler feeds the link's
inbox from the bot's stream (one reader task per stream, so a timeout never cancels the stream)
and drains its outbox to the bot.  The match itself only ever waits on the inbox, with the
seat's deadline, on the referee's clock.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.engine import (
    Action,
    DiceStream,
    State,
    apply,
    apply_throw,
    legal_actions,
    new_game,
    scores,
)
from arena.engine.notation import format_throw
from arena.engine.record import RULES_VERSION, RecordWriter
from arena.engine.scoring import placings_with_forfeits
from arena.v1 import arena_pb2 as pb
from arena.wire import LOUNGER_NAMES, PROTOCOL, TRACK, state_to_pb

from .answers import Accept, Noise, Received, Reject, judge, last_message
from .botseed import bot_seed
from .crashinfo import crash_detail
from .faults import Forfeit, Reason
from .result import MatchResult, SeatOutcome
from .timecontrol import SeatClock, TimeControl

log = logging.getLogger(__name__)

INBOX_LIMIT = 64  # unread messages from one bot before it counts as flooding
SETUP_TIME = 5.0  # seconds the match waits for the Ready of seats that promised one (arena-setup)


@dataclass(frozen=True)
class Closed:
    """Inbox sentinel: the bot's stream ended.  ``reason`` is a Reason, ``detail`` says how."""

    reason: Reason
    detail: str


@dataclass(frozen=True)
class Garbage:
    """Inbox item: bytes that are not a BotMessage."""

    size: int
    error: str


@dataclass(frozen=True)
class Away:
    """Inbox item: the stream of a seat that may reconnect (remote bot) dropped."""

    detail: str


@dataclass(frozen=True)
class Answered:
    """A decision as the seat answered it: the action, the seconds it thought (on the referee's
    clock, from the request to the answer, less the time its stream was down), the seconds its
    stream was down meanwhile, and (in CPU mode) the CPU seconds it used."""

    action: Action
    think: float
    away: float = 0.0
    cpu: float | None = None


InboxItem = pb.BotMessage | Closed | Garbage | Away  # what the stream reader delivers
Queued = Received | Closed | Garbage | Away  # what the match reads: messages stamped on arrival

# probe(seat) -> (Reason, detail) when the seat's process is known to be dead or frozen
Probe = Callable[[int], tuple[Reason, str] | None]
# evidence(seat) -> extra evidence (e.g. the stderr tail) for a forfeit
EvidenceFn = Callable[[int], dict[str, Any]]
# cpu_time(seat) -> CPU seconds used so far by the seat's bot (process tree), or None
CpuFn = Callable[[int], float | None]
# settle(seat) -> after a seat's stream ended: returns (within a bounded time) once its process
# has exited if it was about to, and its last output has been collected, so that the forfeit's
# reason and evidence hold how it ended and what it wrote just before
Settle = Callable[[int], Awaitable[None]]


@dataclass(eq=False)
class SeatLink:
    """The match's end of one seat's stream."""

    seat: int
    inbox: asyncio.Queue[Queued] = field(default_factory=asyncio.Queue)
    outbox: asyncio.Queue[pb.RefereeMessage | None] = field(default_factory=asyncio.Queue)
    attached: asyncio.Event = field(default_factory=asyncio.Event)
    closed: Closed | None = None
    pending: list[pb.Event] = field(default_factory=list)
    hello: str = ""
    last_message: str = ""
    grace: float = 0.0  # seconds the seat may take to reconnect after its stream drops
    away_since: float | None = None  # when the stream dropped (None while connected)
    reattached: asyncio.Event = field(default_factory=asyncio.Event)
    pending_request: pb.RefereeMessage | None = None  # sent and not yet answered
    latest_sent: int = 0  # id of the latest request sent to this seat (stamped on what arrives)
    # (dropped, back) monotonic times of the outages since the current request was sent
    outages: list[tuple[float, float]] = field(default_factory=list)
    setup: bool = False  # the stream promised a Ready after the Welcome (metadata arena-setup)
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set by a Ready or a closed stream
    readies: int = 0

    def deliver(self, item: InboxItem) -> None:
        """Called by the stream reader for every item; flags closure and flooding.  A Ready sets
        :attr:`ready` and never reaches the inbox (sent late or again it is ignored)."""
        if self.closed is not None:
            return
        if isinstance(item, pb.BotMessage) and item.WhichOneof("message") == "ready":
            self.readies += 1
            if self.readies <= INBOX_LIMIT:
                self.ready.set()
                return
            item = Closed(Reason.MALFORMED_ACTION, f"flooded the stream: over {INBOX_LIMIT} ready messages")
        if isinstance(item, Closed) and not (self.grace > 0 and item.reason == Reason.DISCONNECTED):
            self.ready.set()  # nothing to wait for
        if isinstance(item, Closed) and self.grace > 0 and item.reason == Reason.DISCONNECTED:
            if self.away_since is None:  # it may come back: not closed, only away
                self.away_since = time.monotonic()
                self.reattached.clear()
                self.inbox.put_nowait(Away(item.detail))
            return
        if isinstance(item, Closed):
            self.closed = item
        elif self.inbox.qsize() >= INBOX_LIMIT:
            item = Closed(Reason.MALFORMED_ACTION, f"flooded the stream: over {INBOX_LIMIT} unread messages")
            self.closed = item
        elif isinstance(item, pb.BotMessage):
            # judged later against the requests sent by now, not by the time the match reads it
            self.inbox.put_nowait(Received(item, self.latest_sent))
            return
        self.inbox.put_nowait(item)

    def request_sent(self, message: pb.RefereeMessage, request_id: int) -> None:
        """Record that request ``request_id`` (``message``) goes out now, and queue it."""
        self.pending_request = message
        self.latest_sent = request_id
        self.outages.clear()  # older outages cannot overlap this request
        self.send(message)

    def came_back(self) -> None:
        """The dropped stream of this seat is back: close the current outage."""
        if self.away_since is not None:
            self.outages.append((self.away_since, time.monotonic()))
        self.away_since = None
        self.reattached.set()

    def away_between(self, start: float, end: float) -> float:
        """Seconds within [``start``, ``end``] (monotonic) during which the seat's stream was down."""
        spans = [*self.outages]
        if self.away_since is not None:
            spans.append((self.away_since, end))
        return sum(max(0.0, min(end, back) - max(start, dropped)) for dropped, back in spans)

    def send(self, message: pb.RefereeMessage) -> None:
        """Queue a message for the bot (dropped once the seat is closed)."""
        self.outbox.put_nowait(message)

    def finish(self) -> None:
        """Tell the stream writer to end the stream."""
        self.outbox.put_nowait(None)


class Match:
    """A match between ``len(names)`` seats.  Create, attach seats, then ``await run()``."""

    def __init__(
        self,
        names: Sequence[str],
        seed: int,
        control: TimeControl,
        *,
        match_id: str | None = None,
        connect_timeout: float = 20.0,
        probe: Probe | None = None,
        evidence: EvidenceFn | None = None,
        settle: Settle | None = None,
        cpu_time: CpuFn | None = None,
        setup_time: float | None = None,
    ) -> None:
        self.names = list(names)
        self.setup_time = SETUP_TIME if setup_time is None else setup_time
        self.cpu_time = cpu_time
        self.players = len(self.names)
        self.seed = seed
        self.control = control
        self.match_id = match_id or uuid.uuid4().hex[:12]
        self.connect_timeout = connect_timeout
        self.probe = probe
        self.evidence = evidence
        self.settle = settle
        self.links = [SeatLink(seat) for seat in range(self.players)]
        self.clocks = [SeatClock(control) for _ in range(self.players)]
        self.forfeits: dict[int, Forfeit] = {}
        self.request_id = 0
        self.events = 0
        self.state: State = new_game(self.players)
        self.done = asyncio.Event()
        self.on_event: Callable[[Match], None] | None = None
        self.seats_changed = asyncio.Event()  # a seat's process exited while the match waited for it

    # ------------------------------------------------------------------ seats

    def welcome(self, seat: int) -> pb.RefereeMessage:
        """The Welcome message for ``seat``."""
        return pb.RefereeMessage(
            welcome=pb.Welcome(
                match_id=self.match_id,
                seat=seat,
                players=self.players,
                rules_version=RULES_VERSION,
                time_control=self.control.to_pb(),
                protocol=PROTOCOL,
                lounger_names=LOUNGER_NAMES,
                track=TRACK,
                seating=self.names,
                bot_seed=bot_seed(self.seed, seat),
                setup_ms=round(self.setup_time * 1000),
            )
        )

    def attach(self, seat: int, *, grace: float = 0.0, setup: bool = False) -> SeatLink:
        """Bind a stream to ``seat`` (the handler then pumps messages through the link).

        With ``grace`` > 0 a dropped stream may reconnect to the seat within that many seconds.
        With ``setup`` the bot promised a Ready after the Welcome: the first request of the match
        waits for it (at most :attr:`setup_time` after the last seat connected).
        """
        link = self.links[seat]
        link.grace = grace
        link.setup = setup
        link.send(self.welcome(seat))
        link.attached.set()
        return link

    def can_reattach(self, seat: int) -> bool:
        """True when ``seat``'s stream dropped and it may still come back."""
        link = self.links[seat]
        return link.away_since is not None and seat not in self.forfeits and not self.done.is_set()

    def reattach(self, seat: int) -> SeatLink:
        """Bind a new stream to a seat whose stream dropped: a fresh Welcome first, then the
        unanswered request (if any) again, then whatever was queued while it was away."""
        link = self.links[seat]
        queued: list[pb.RefereeMessage | None] = []
        while not link.outbox.empty():
            queued.append(link.outbox.get_nowait())
        link.outbox.put_nowait(self.welcome(seat))
        if link.pending_request is not None and not any(m is link.pending_request for m in queued):
            link.outbox.put_nowait(link.pending_request)
        for m in queued:
            link.outbox.put_nowait(m)
        link.came_back()
        return link

    async def _wait_for_seats(self) -> None:
        """Wait until every seat is connected or out (its process exited: :meth:`seat_process_exited`).

        Stops early once fewer than two seats can still play: the match is then decided.  A seat
        still missing at the connect timeout is a no-show.
        """
        deadline = time.monotonic() + self.connect_timeout
        while True:
            waiting = [
                link for link in self.links if not link.attached.is_set() and link.seat not in self.forfeits
            ]
            left = deadline - time.monotonic()
            if not waiting or self.players - len(self.forfeits) < 2 or left <= 0:
                break
            self.seats_changed.clear()
            waits = [asyncio.create_task(link.attached.wait()) for link in waiting]
            waits.append(asyncio.create_task(self.seats_changed.wait()))
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waits:
                    task.cancel()
        if self.players - len(self.forfeits) < 2:
            return  # decided before it began: whoever is left wins, late or not
        for link in self.links:
            if not link.attached.is_set() and link.seat not in self.forfeits:
                self._forfeit(link.seat, Reason.NO_SHOW, f"did not connect within {self.connect_timeout:g}s")
        await self._wait_for_setup()

    def seat_process_exited(self, seat: int, how: str) -> None:
        """The process hosting ``seat``'s bot has exited (``how``: e.g. ``the process exited with
        status 1``); called by whoever launched it, once its stderr has been read.

        Before the seat connected, it forfeits at once as ``crashed`` (no 20 s no-show wait);
        while connected, its stream counts as closed by a crash.  Either way the forfeit's detail
        carries the exception line of the bot's stderr.  Ignored once the match is over or the
        seat has already forfeited.
        """
        if self.done.is_set() or seat in self.forfeits or not 0 <= seat < self.players:
            return
        link = self.links[seat]
        tail = self._stderr_tail(seat)
        if not link.attached.is_set():
            self._forfeit(seat, Reason.CRASHED, crash_detail(how, tail, before_connecting=True))
            self.seats_changed.set()
        else:
            link.deliver(Closed(Reason.CRASHED, crash_detail(how, tail)))

    def _stderr_tail(self, seat: int) -> str:
        if self.evidence is None:
            return ""
        try:
            return str(self.evidence(seat).get("stderr_tail", ""))
        except Exception:  # evidence must never break a match
            return ""

    async def _wait_for_setup(self) -> None:
        """Give the seats that promised a Ready up to :attr:`setup_time` to send it, so that their
        set-up is not charged to a decision.  A seat still busy after that is not forfeited: the
        match starts, and its clock runs from its first request as always."""
        waits = [
            asyncio.create_task(link.ready.wait())
            for link in self.links
            if link.setup and link.seat not in self.forfeits and not link.ready.is_set()
        ]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=self.setup_time)
            for task in pending:
                task.cancel()

    # ------------------------------------------------------------------ the game

    async def run(self) -> MatchResult:
        """Play the match to its end and return the result with its replay.  Never raises for
        anything a bot does; every bot failure becomes a forfeit."""
        start = time.monotonic()
        writer = RecordWriter(
            self.players,
            self.seed,
            match=self.match_id,
            seating=self.names,
            time_control=self.control.describe(),
        )
        dice = DiceStream(self.seed)
        try:
            await self._wait_for_seats()
            self._cpu_mark(start=True)
            state = self.state
            while not state.is_over and self.players - len(self.forfeits) >= 2:
                await self._check_links()
                if state.is_chance:
                    faces = dice.throw(state.turn, state.throw_no + 1, state.dice)
                    writer.throw(faces)
                    self._broadcast(pb.Event(throw=format_throw(faces)))
                    state = apply_throw(state, faces)
                else:
                    action, extra = await self._decide(state)
                    writer.decision(state, action, **extra)
                    self._broadcast(
                        pb.Event(
                            action=pb.SeatAction(
                                seat=state.seat,
                                action=str(action),
                                forced=bool(extra.get("forced")),
                                automatic=bool(extra.get("auto")),
                            )
                        )
                    )
                    state = apply(state, action)
                self.state = state
                self.events += 1
                if self.on_event is not None:
                    self.on_event(self)
            self._cpu_mark(start=False)
            forfeits = [self.forfeits[s].to_json() for s in sorted(self.forfeits)]
            totals: dict[str, Any] = {"think_s": [round(c.total, 4) for c in self.clocks]}
            if any(c.cpu_total is not None for c in self.clocks):
                totals["cpu_s"] = [
                    None if c.cpu_total is None else round(c.cpu_total, 4) for c in self.clocks
                ]
            writer.finish(state, forfeits, **totals)
            result = self._result(state, writer.text(), time.monotonic() - start)
        finally:
            self.done.set()
        for link in self.links:
            if link.seat not in self.forfeits:
                link.send(pb.RefereeMessage(result=self._result_pb(result)))
            link.finish()
        return result

    def _cpu(self, seat: int) -> float | None:
        if self.cpu_time is None:
            return None
        try:
            return self.cpu_time(seat)
        except Exception:  # accounting must never break a match
            return None

    def _cpu_mark(self, *, start: bool) -> None:
        """CPU of every bot at the start and the end of the game (persistent bots included)."""
        for seat, clock in enumerate(self.clocks):
            now = self._cpu(seat)
            if start:
                clock.cpu_start = now
            elif now is not None and clock.cpu_start is not None:
                clock.cpu_total = max(0.0, now - clock.cpu_start)

    def _broadcast(self, event: pb.Event) -> None:
        for link in self.links:
            if link.seat not in self.forfeits:
                link.pending.append(event)

    async def _check_links(self) -> None:
        """Forfeit seats whose stream closed while they were idle, or that stayed away too long."""
        now = time.monotonic()
        for link in self.links:
            if (
                link.away_since is not None
                and now - link.away_since > link.grace
                and link.seat not in self.forfeits
            ):
                self._forfeit(link.seat, Reason.DISCONNECTED, f"did not reconnect within {link.grace:g}s")
            if link.closed is not None and link.seat not in self.forfeits:
                reason, detail = await self._classify(link.seat, link.closed)
                self._forfeit(link.seat, reason, detail)

    async def _classify(self, seat: int, closed: Closed) -> tuple[Reason, str]:
        """A closed stream is a crash or a stall when the bot's process says so.  A crash's
        detail says how the process ended and the exception line of its stderr, once."""
        if closed.reason in (Reason.DISCONNECTED, Reason.STALLED) and self.probe is not None:
            probed = self.probe(seat)
            if self.settle is not None and (probed is None or probed[0] is Reason.CRASHED):
                # It may be dying (a sandbox exits just after its bot): give it a moment, and
                # collect its last words (evidence) before the forfeit.
                await self.settle(seat)
                probed = self.probe(seat) or probed  # by now perhaps with its exit status
            if probed is not None and probed[0] is Reason.CRASHED:
                return probed[0], crash_detail(probed[1], self._stderr_tail(seat), stream=closed.detail)
            if probed is not None:
                return probed[0], f"{probed[1]}; {closed.detail}"
        return closed.reason, closed.detail

    async def _decide(self, state: State) -> tuple[Action, dict[str, Any]]:
        seat = state.seat
        legal = legal_actions(state)
        if seat in self.forfeits:
            return legal[0], {"auto": True, "forced": True} if len(legal) == 1 else {"auto": True}
        if len(legal) == 1:
            return legal[0], {"forced": True}  # flagged in the record and in the bots' events
        asked = await self._ask(seat, state, legal)
        if asked is None:
            return legal[0], {"auto": True}
        extra: dict[str, Any] = {"ms": round(asked.think * 1000, 3)}
        if asked.away > 0:
            extra["away_ms"] = round(asked.away * 1000, 3)
        if asked.cpu is not None:
            extra["cpu_ms"] = round(asked.cpu * 1000, 3)
        return asked.action, extra

    async def _ask(self, seat: int, state: State, legal: tuple[Action, ...]) -> Answered | None:
        """Request a decision; return the answer, or None after a forfeit.

        Total: whatever the seat sends (or fails to send), the outcome is a legal action or a
        forfeit with evidence.  An unexpected exception while handling one of its messages is an
        arena bug: it is logged, and the seat forfeits as ``malformed-action`` with the exception
        in the detail; it never escapes :meth:`run`.
        """
        link = self.links[seat]
        clock = self.clocks[seat]
        self.request_id += 1
        rid = self.request_id
        budget = clock.budget()
        request = pb.DecisionRequest(
            request_id=rid,
            state=state_to_pb(state),
            legal_actions=[str(a) for a in legal],
            move_time_ms=0 if budget is None else round(self.control.move_time * 1000),
            bank_ms=0 if budget is None else round(clock.bank * 1000),
            events=link.pending,
        )
        link.pending = []
        cpu_before = self._cpu(seat) if self.control.cpu else None
        sent = time.monotonic()
        link.request_sent(pb.RefereeMessage(request=request), rid)
        wall = clock.wall_budget()
        ignored = 0  # messages that answer nothing (a hello, stale answers): a flood past the limit
        while True:
            # time away (a remote bot reconnecting) moves the deadline: it is not think time
            deadline = None if wall is None else sent + wall + link.away_between(sent, time.monotonic())
            try:
                if deadline is None or not link.inbox.empty():
                    item = await link.inbox.get()
                else:
                    async with asyncio.timeout_at(deadline):  # the loop's clock is time.monotonic
                        item = await link.inbox.get()
            except TimeoutError:
                self._timed_out(seat, sent, wall)
                return None
            think = self._think(link, sent)
            try:
                if isinstance(item, Away):
                    if not await self._await_return(seat, item, think):
                        return None
                    continue
                if isinstance(item, Closed):
                    reason, detail = await self._classify(seat, item)
                    self._forfeit(seat, reason, detail, used=think)
                    return None
                if isinstance(item, Garbage):
                    link.last_message = f"<{item.size} bytes>"
                    detail = f"sent {item.size} bytes that are not a BotMessage: {item.error}"
                    self._forfeit(seat, Reason.MALFORMED_ACTION, detail, used=think)
                    return None
                text = last_message(item.message)
                if text is not None:
                    link.last_message = text
                verdict = judge(item, rid, state)
                if isinstance(verdict, Reject):
                    self._forfeit(seat, verdict.reason, verdict.detail, used=think)
                    return None
                if isinstance(verdict, Noise):
                    if verdict.hello is not None:
                        link.hello = verdict.hello
                    ignored += 1  # counted even while the match reads them as fast as they come
                    if ignored > INBOX_LIMIT:
                        detail = f"flooded the stream: over {INBOX_LIMIT} messages that answer nothing"
                        self._forfeit(seat, Reason.MALFORMED_ACTION, detail, used=think)
                        return None
                    continue
                assert isinstance(verdict, Accept)
                cpu = None
                if cpu_before is not None:
                    cpu_after = self._cpu(seat)
                    cpu = None if cpu_after is None else max(0.0, cpu_after - cpu_before)
                    if clock.over_budget(cpu):
                        detail = f"used {cpu:.3f}s of CPU (limit {budget:.3f}s)"
                        self._forfeit(seat, Reason.TIMEOUT, detail, used=think)
                        return None
                clock.charge(think, cpu)
                link.pending_request = None
                return Answered(verdict.action, think, link.away_between(sent, time.monotonic()), cpu)
            except Exception as exc:  # an arena bug: the bot forfeits, the referee carries on
                log.exception("arena bug: handling seat %d's message for request %d raised", seat, rid)
                detail = f"the referee failed on this message (an arena bug, logged): {exc!r}"
                self._forfeit(seat, Reason.MALFORMED_ACTION, detail[:1000], used=think)
                return None

    @staticmethod
    def _think(link: SeatLink, sent: float) -> float:
        """Seconds the seat has been thinking since ``sent``: the time its stream was down is not
        think time."""
        now = time.monotonic()
        return max(0.0, now - sent - link.away_between(sent, now))

    def _timed_out(self, seat: int, sent: float, wall: float | None) -> None:
        """No answer in time: ``timeout``, or ``stalled`` when the seat's process is found stopped
        (frozen) at the deadline."""
        link = self.links[seat]
        think = self._think(link, sent)
        detail = f"no answer after {think:.3f}s (limit {wall or 0.0:.3f}s)"
        away = link.away_between(sent, time.monotonic())
        if away > 0:
            detail += f"; the {away:.3f}s its connection was down do not count"
        probed = self._probe(seat)
        if probed is not None and probed[0] is Reason.STALLED:
            self._forfeit(seat, Reason.STALLED, f"{probed[1]}: {detail}", used=think)
        else:
            self._forfeit(seat, Reason.TIMEOUT, detail, used=think)

    def _probe(self, seat: int) -> tuple[Reason, str] | None:
        if self.probe is None:
            return None
        try:
            return self.probe(seat)
        except Exception:  # a probe must never break a match
            log.exception("arena bug: probing seat %d raised", seat)
            return None

    async def _await_return(self, seat: int, away: Away, think: float) -> bool:
        """The seat's stream dropped: wait (within its grace) for it to come back.  True once it
        is back; False after the ``disconnected`` forfeit."""
        link = self.links[seat]
        if link.away_since is None:
            return True  # it has already come back
        back = link.grace - (time.monotonic() - link.away_since)
        try:
            async with asyncio.timeout(max(0.0, back)):
                await link.reattached.wait()
        except TimeoutError:
            detail = f"lost the connection ({away.detail}) and did not reconnect within {link.grace:g}s"
            self._forfeit(seat, Reason.DISCONNECTED, detail, used=think)
            return False
        return True

    def _forfeit(self, seat: int, reason: Reason, detail: str, *, used: float | None = None) -> None:
        """The one path every bot failure takes: record it, tell the bot, close its stream."""
        if seat in self.forfeits:
            return
        link = self.links[seat]
        evidence: dict[str, Any] = {}
        if used is not None:
            evidence["time_used_ms"] = round(used * 1000, 3)
        if link.last_message:
            evidence["last_message"] = link.last_message
        if self.evidence is not None:
            try:
                evidence.update(self.evidence(seat))
            except Exception:  # evidence must never stop a forfeit
                log.exception("arena bug: collecting seat %d's evidence raised", seat)
        self.forfeits[seat] = Forfeit(seat, reason, detail[:1000], self.events, evidence)
        pts = scores(self.state)
        link.send(
            pb.RefereeMessage(
                result=pb.MatchResult(
                    match_id=self.match_id,
                    seats=[
                        pb.SeatResult(
                            seat=seat,
                            score=pts[seat],
                            placing=placings_with_forfeits(pts, list(self.forfeits))[seat],
                            termination=str(reason),
                            detail=detail[:1000],
                        )
                    ],
                )
            )
        )
        link.finish()

    # ------------------------------------------------------------------ the result

    def _result(self, state: State, replay: str, duration: float) -> MatchResult:
        pts = scores(state)
        places = placings_with_forfeits(pts, list(self.forfeits))
        termination = state.termination if state.termination is not None else "forfeit"
        seats = []
        for seat in range(self.players):
            f = self.forfeits.get(seat)
            clock = self.clocks[seat]
            seats.append(
                SeatOutcome(
                    seat=seat,
                    name=self.names[seat],
                    score=pts[seat],
                    placing=places[seat],
                    termination=str(f.reason) if f else termination,
                    detail=f.detail if f else "",
                    think_total=clock.total,
                    think_max=clock.max,
                    decisions=clock.decisions,
                    cpu_time=clock.cpu_total,
                )
            )
        return MatchResult(
            match_id=self.match_id,
            seed=self.seed,
            players=self.players,
            termination=termination,
            seats=tuple(seats),
            replay=replay,
            forfeits=tuple(self.forfeits[s] for s in sorted(self.forfeits)),
            duration=duration,
            events=self.events,
        )

    def _result_pb(self, result: MatchResult) -> pb.MatchResult:
        return pb.MatchResult(
            match_id=result.match_id,
            seats=[
                pb.SeatResult(
                    seat=s.seat, score=s.score, placing=s.placing, termination=s.termination, detail=s.detail
                )
                for s in result.seats
            ],
        )
