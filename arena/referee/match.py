"""One match: the game loop, each seat's decisions with their deadlines, and forfeits.

The match talks to seats only through the seam of :mod:`arena.referee.channel`: it sends plain
values (Welcome, Request, Result) through each seat's channel and reads what the seat's
transport delivered to its :class:`~arena.referee.seatlink.SeatLink` (answers, garbage, the end
of the stream).  Neither protobuf nor gRPC is known here: the gRPC server is one transport
(:mod:`arena.referee.grpc_channel`), :mod:`arena.referee.fakechannel` another.  Judging an
answer is :mod:`arena.referee.answers`; building the results is :mod:`arena.referee.outcome`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from arena.engine import (
    Action,
    DiceStream,
    State,
    apply,
    apply_throw,
    legal_actions,
    new_game,
)
from arena.engine.notation import format_throw
from arena.engine.record import RecordWriter
from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules

from .answers import Accept, Noise, Reject, judge, last_message
from .botseed import bot_seed
from .channel import (
    ActionEvent,
    Away,
    Closed,
    CpuFn,
    Event,
    EvidenceFn,
    Garbage,
    Probe,
    Request,
    SeatChannel,
    Settle,
    ThrowEvent,
    Welcome,
)
from .crashinfo import GENERIC_STREAM_END, crash_detail
from .faults import Forfeit, Reason
from .outcome import forfeit_line, match_result, result_lines
from .result import MatchResult
from .seatlink import INBOX_LIMIT, Queued, SeatLink
from .timecontrol import SeatClock, TimeControl

__all__ = [  # the names other modules import from here (the seam's names live in .channel)
    "INBOX_LIMIT",
    "SETUP_TIME",
    "Answered",
    "Away",
    "Closed",
    "CpuFn",
    "EvidenceFn",
    "Garbage",
    "Match",
    "Probe",
    "SeatLink",
    "Settle",
]

log = logging.getLogger(__name__)

SETUP_TIME = 5.0  # seconds the match waits for the Ready of seats that promised one (arena-setup)

_TEXTS: dict[Action, str] = {}
_TEXTS_LIMIT = 100_000


def action_text(action: Action) -> str:
    """``str(action)``, memoised: every request lists its legal actions as text, and the legal
    actions of a game are a small finite set (bounded all the same)."""
    text = _TEXTS.get(action)
    if text is None:
        if len(_TEXTS) >= _TEXTS_LIMIT:
            _TEXTS.clear()
        text = _TEXTS[action] = str(action)
    return text


@dataclass(frozen=True)
class Answered:
    """A decision as the seat answered it: the action, the seconds it thought (on the referee's
    clock, from the request to the answer, less the time its stream was down), the seconds its
    stream was down meanwhile, and the CPU seconds it used where the host can measure them."""

    action: Action
    think: float
    away: float = 0.0
    cpu: float | None = None


class _Step(Enum):
    """What became of one inbox item while a decision was awaited (besides an answer)."""

    WAIT = "wait"  # it answered nothing: keep waiting
    OUT = "out"  # the seat forfeited


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
        rules: Rules = DEFAULT_RULES,
    ) -> None:
        self.names = list(names)
        self.rules = rules  # the game's rules: in the state, the Welcome and the record header
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
        self.state: State = new_game(self.players, rules)
        self.done = asyncio.Event()
        self.on_event: Callable[[Match], None] | None = None
        self.record: RecordWriter | None = None  # the record being written (on_event reads its lines)
        self.seats_changed = asyncio.Event()  # a seat's process exited while the match waited for it

    # ------------------------------------------------------------------ seats

    def welcome(self, seat: int) -> Welcome:
        """The Welcome for ``seat``."""
        return Welcome(
            match_id=self.match_id,
            seat=seat,
            players=self.players,
            rules_version=self.rules.version,
            time_control=self.control,
            seating=tuple(self.names),
            bot_seed=bot_seed(self.seed, seat),
            setup_ms=round(self.setup_time * 1000),
        )

    def attach(self, seat: int, channel: SeatChannel, *, grace: float = 0.0, setup: bool = False) -> SeatLink:
        """Connect ``seat`` through ``channel``; the seat is sent its Welcome, and its transport
        then delivers what the seat sends to the returned link (:meth:`SeatLink.deliver`).

        With ``grace`` > 0 a dropped stream may reconnect to the seat within that many seconds
        (:meth:`reattach`).  With ``setup`` the seat promised a Ready after the Welcome: the first
        request of the match waits for it (at most :attr:`setup_time` after the last seat connected).
        """
        link = self.links[seat]
        link.grace = grace
        link.setup = setup
        link.connect(channel)
        link.send(self.welcome(seat))
        link.attached.set()
        return link

    def connected(self, seat: int) -> bool:
        """Whether ``seat`` ever connected to this match."""
        return self.links[seat].attached.is_set()

    def can_reattach(self, seat: int) -> bool:
        """True when ``seat``'s stream dropped and it may still come back."""
        link = self.links[seat]
        return link.can_come_back() and seat not in self.forfeits and not self.done.is_set()

    def stream_gone(self, seat: int) -> None:
        """No stream holds ``seat`` now (its session's next one has come): a seat with a grace that
        has not heard yet that its stream ended is away from now on, so the new stream takes it
        again (it was parked for the session's next match, and this one waited out its grace)."""
        link = self.links[seat]
        away = link.can_come_back() or seat in self.forfeits or self.done.is_set()
        if link.grace > 0 and link.closed is None and not away:
            link.deliver(Closed(Reason.DISCONNECTED, "its stream ended; a new one came with its token"))

    def reattach(self, seat: int, channel: SeatChannel) -> SeatLink:
        """Connect a seat whose stream dropped through a new ``channel``: a fresh Welcome first,
        then the unanswered request (if any) again."""
        link = self.links[seat]
        link.came_back(channel)
        link.send(self.welcome(seat))
        if link.pending_request is not None:
            link.send(self._asked_again(seat, link.pending_request))
        return link

    def _asked_again(self, seat: int, request: Request) -> Request:
        """``request`` as it is sent again after a reattach: its ``move_time_ms`` and ``bank_ms``
        say what is left now (the think time before the drop counts; it was sent with what was
        left when it was first sent).  In CPU mode, or without a clock, it is sent unchanged."""
        link = self.links[seat]
        if self.clocks[seat].budget() is None or self.control.cpu:
            return request
        used = link.think(link.pending_sent)
        move = max(0.0, self.control.move_time - used)
        bank = max(0.0, self.clocks[seat].bank - max(0.0, used - self.control.move_time))
        return replace(request, move_time_ms=round(move * 1000), bank_ms=round(bank * 1000))

    async def _wait_for_seats(self) -> None:
        """Wait until every seat is connected or out (its process exited: :meth:`seat_process_exited`).

        A seat still missing at the connect timeout is a no-show.  This holds when the others are
        out already: a seat wins by forfeit only once it has shown up (when both bots of a match
        crash at start, whichever exits second used to be credited the win).
        """
        deadline = time.monotonic() + self.connect_timeout
        while True:
            waiting = [
                link for link in self.links if not link.attached.is_set() and link.seat not in self.forfeits
            ]
            left = deadline - time.monotonic()
            if not waiting or left <= 0:
                break
            self.seats_changed.clear()
            waits = [asyncio.create_task(link.attached.wait()) for link in waiting]
            waits.append(asyncio.create_task(self.seats_changed.wait()))
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waits:
                    task.cancel()
        for link in self.links:
            if not link.attached.is_set() and link.seat not in self.forfeits:
                self._forfeit(link.seat, Reason.NO_SHOW, f"did not connect within {self.connect_timeout:g}s")
        if self.players - len(self.forfeits) < 2:
            return  # decided before it began: whoever is left (and showed up) wins
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
        self.record = writer = RecordWriter(
            self.players,
            self.seed,
            rules=self.rules,
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
                    self._broadcast(ThrowEvent(format_throw(faces)))
                    state = apply_throw(state, faces)
                else:
                    action, extra = await self._decide(state)
                    writer.decision(state, action, **extra)
                    forced, auto = bool(extra.get("forced")), bool(extra.get("auto"))
                    self._broadcast(ActionEvent(state.seat, action_text(action), forced, auto))
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
            result = match_result(
                match_id=self.match_id,
                seed=self.seed,
                names=self.names,
                state=state,
                forfeits=self.forfeits,
                clocks=self.clocks,
                replay=writer.text(),
                duration=time.monotonic() - start,
                events=self.events,
            )
        finally:
            self.done.set()
        for link in self.links:
            if link.seat not in self.forfeits:
                link.send(result_lines(result, link.seat))
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

    def _broadcast(self, event: Event) -> None:
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
            if probed is not None:  # stopped: the keepalive cut it, not the bot (no advice needed)
                how = "the stream ended" if closed.detail.startswith(GENERIC_STREAM_END) else closed.detail
                return probed[0], f"{probed[1]}; {how}"
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

    # ------------------------------------------------------------------ one decision

    def _request(self, seat: int, state: State, legal: tuple[Action, ...]) -> Request:
        """The next request for ``seat``, with the events it has not been told yet."""
        link = self.links[seat]
        clock = self.clocks[seat]
        self.request_id += 1
        timed = clock.budget() is not None
        request = Request(
            request_id=self.request_id,
            state=state,
            legal_actions=tuple(map(action_text, legal)),
            move_time_ms=round(self.control.move_time * 1000) if timed else 0,
            bank_ms=round(clock.bank * 1000) if timed else 0,
            events=tuple(link.pending),
        )
        link.pending = []
        return request

    async def _ask(self, seat: int, state: State, legal: tuple[Action, ...]) -> Answered | None:
        """Request a decision; return the answer, or None after a forfeit.

        Total: whatever the seat sends (or fails to send), the outcome is a legal action or a
        forfeit with evidence.  An unexpected exception while handling one of its messages is an
        arena bug: it is logged, and the seat forfeits as ``malformed-action`` with the exception
        in the detail; it never escapes :meth:`run`.
        """
        link = self.links[seat]
        request = self._request(seat, state, legal)
        cpu_before = self._cpu(seat)  # measured in every mode (the record's cpu_ms); charged in CPU mode
        sent = time.monotonic()
        link.request_sent(request)
        wall = self.clocks[seat].wall_budget()
        while True:
            item = await self._next(link, sent, wall)
            if item is None:
                self._timed_out(seat, sent)
                return None
            think = link.think(sent)
            try:
                step = await self._handle(seat, item, request.request_id, state, think)
                if step is _Step.WAIT:
                    continue
                if step is _Step.OUT:
                    return None
                return self._charge(seat, step, sent, think, cpu_before)
            except Exception as exc:  # an arena bug: the bot forfeits, the referee carries on
                rid = request.request_id
                log.exception("arena bug: handling seat %d's message for request %d raised", seat, rid)
                detail = f"the referee failed on this message (an arena bug, logged): {exc!r}"
                self._forfeit(seat, Reason.MALFORMED_ACTION, detail[:1000], used=think)
                return None

    @staticmethod
    async def _next(link: SeatLink, sent: float, wall: float | None) -> Queued | None:
        """The seat's next inbox item, or None at its deadline: ``wall`` seconds after ``sent``,
        moved by the time its stream was down (time away is not think time, up to the match's
        allowance: :meth:`SeatLink.free_away`)."""
        deadline = None if wall is None else sent + wall + link.free_away(sent, time.monotonic())
        try:
            if deadline is None or not link.inbox.empty():
                return await link.inbox.get()
            async with asyncio.timeout_at(deadline):  # the loop's clock is time.monotonic
                return await link.inbox.get()
        except TimeoutError:
            return None

    async def _handle(self, seat: int, item: Queued, rid: int, state: State, think: float) -> Action | _Step:
        """One inbox item while request ``rid`` waits: the accepted action, or what became of it."""
        link = self.links[seat]
        if isinstance(item, Away):
            link.took_away()
            return _Step.WAIT if await self._await_return(seat, think) else _Step.OUT
        if isinstance(item, Closed):
            reason, detail = await self._classify(seat, item)
            self._forfeit(seat, reason, detail, used=think)
            return _Step.OUT
        if isinstance(item, Garbage):
            link.last_message = f"<{item.size} bytes>"
            detail = f"sent {item.size} bytes that are not a BotMessage: {item.error}"
            self._forfeit(seat, Reason.MALFORMED_ACTION, detail, used=think)
            return _Step.OUT
        text = last_message(item.message)
        if text is not None:
            link.last_message = text
        verdict = judge(item, rid, state)
        if isinstance(verdict, Reject):
            self._forfeit(seat, verdict.reason, verdict.detail, used=think)
            return _Step.OUT
        if isinstance(verdict, Noise):
            if verdict.hello is not None:
                link.hello = verdict.hello
            link.ignored += 1  # counted even while the match reads them as fast as they come
            if link.ignored > INBOX_LIMIT:
                detail = f"flooded the stream: over {INBOX_LIMIT} messages that answer nothing"
                self._forfeit(seat, Reason.MALFORMED_ACTION, detail, used=think)
                return _Step.OUT
            return _Step.WAIT
        assert isinstance(verdict, Accept)
        return verdict.action

    def _charge(
        self, seat: int, action: Action, sent: float, think: float, cpu_before: float | None
    ) -> Answered | None:
        """Charge an accepted answer to the seat's clock; in CPU mode an answer over the CPU
        budget is a ``timeout`` (None)."""
        link = self.links[seat]
        clock = self.clocks[seat]
        cpu = None
        if cpu_before is not None:
            cpu_after = self._cpu(seat)
            cpu = None if cpu_after is None else max(0.0, cpu_after - cpu_before)
            if clock.over_budget(cpu):
                detail = f"used {cpu:.3f}s of CPU ({clock.limit_detail(cpu=True)})"
                self._forfeit(seat, Reason.TIMEOUT, detail, used=think)
                return None
        clock.charge(think, cpu)
        link.pending_request = None
        return Answered(action, think, link.spend_away(sent), cpu)

    def _timed_out(self, seat: int, sent: float) -> None:
        """No answer in time: ``timeout``, or ``stalled`` when the seat's process is found stopped
        (frozen) at the deadline."""
        link = self.links[seat]
        think = link.think(sent)
        detail = f"no answer after {think:.3f}s ({self.clocks[seat].limit_detail()})"
        away = link.away_between(sent, time.monotonic())
        free = link.spend_away(sent)
        if away > 0:
            detail += f"; of the {away:.3f}s its connection was down, {free:.3f}s do not count"
            if free < away:
                detail += f" (time away is free up to {link.grace:g}s per match)"
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

    async def _await_return(self, seat: int, think: float) -> bool:
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
            detail = f"lost the connection ({link.away_detail}) and did not reconnect within {link.grace:g}s"
            self._forfeit(seat, Reason.DISCONNECTED, detail, used=think)
            return False
        return True

    def _forfeit(self, seat: int, reason: Reason, detail: str, *, used: float | None = None) -> None:
        """The one path every bot failure takes: record it, tell the seat, end its stream."""
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
        link.send(forfeit_line(self.match_id, self.state, list(self.forfeits), seat, reason, detail))
        link.finish()
