"""An in-memory implementation of the seam (:mod:`arena.referee.channel`): seats without a wire
and without processes, for unit tests and in-process seats.

* :class:`FakeChannel` is a :class:`~arena.referee.channel.SeatChannel` that keeps what the seat
  is sent, and lets its owner act as the seat: :meth:`~FakeChannel.answer`,
  :meth:`~FakeChannel.hello`, :meth:`~FakeChannel.garbage`, :meth:`~FakeChannel.close`, ...
  (each delivers one :data:`~arena.referee.channel.Inbound` item, exactly as a transport does).
* :class:`FakeProcesses` stands for the processes behind the seats: the hooks a launcher gives a
  match (probe, evidence, settle, CPU), with :meth:`~FakeProcesses.crash` and
  :meth:`~FakeProcesses.freeze` to make a seat's process die or stop.
* :class:`FakeTable` plays a real :class:`~arena.referee.match.Match` with one answerer per seat
  (an async function called for every request), and can drop and reconnect a seat.

Everything runs on the event loop in memory: a forfeit path plays out in milliseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from arena.engine import GreedyPolicy

from .channel import (
    Answer,
    Closed,
    Garbage,
    Hello,
    Outgoing,
    Ready,
    Request,
    Result,
    Unexpected,
    Welcome,
)
from .faults import Reason
from .match import Match
from .result import MatchResult
from .seatlink import SeatLink
from .timecontrol import TimeControl

GENEROUS = TimeControl(move_time=30.0, bank=30.0)  # in-memory seats are never slow


class FakeChannel:
    """One seat's in-memory channel.  What the match sends is kept in :attr:`sent` (in order)
    and handed to :meth:`receive`; what the seat says goes to the match's link."""

    def __init__(self) -> None:
        self.sent: list[Outgoing] = []
        self.finished = False
        self.link: SeatLink | None = None  # set by FakeTable (or the caller) once attached
        self._queue: asyncio.Queue[Outgoing | None] = asyncio.Queue()

    # ------------------------------------------------------------------ SeatChannel

    def send(self, message: Outgoing) -> None:
        """Keep ``message`` (dropped once finished, like a real stream)."""
        if not self.finished:
            self.sent.append(message)
            self._queue.put_nowait(message)

    def finish(self) -> None:
        """The stream ends after what was sent."""
        if not self.finished:
            self.finished = True
            self._queue.put_nowait(None)

    async def receive(self) -> Outgoing | None:
        """The next message sent to the seat, or None once the stream has ended."""
        return await self._queue.get()

    # ------------------------------------------------------------------ what the seat was told

    @property
    def welcomes(self) -> list[Welcome]:
        """Every Welcome (a second one follows a reconnection)."""
        return [m for m in self.sent if isinstance(m, Welcome)]

    @property
    def requests(self) -> list[Request]:
        """Every decision request, in order."""
        return [m for m in self.sent if isinstance(m, Request)]

    @property
    def results(self) -> list[Result]:
        """Every result (a forfeited seat is told its own line)."""
        return [m for m in self.sent if isinstance(m, Result)]

    # ------------------------------------------------------------------ acting as the seat

    def _deliver(self, item: Answer | Hello | Ready | Unexpected | Garbage | Closed) -> None:
        if self.link is None:
            raise RuntimeError("this channel is not attached to a seat: attach it first (Match.attach)")
        self.link.deliver(item)

    def answer(self, request_id: int, text: str) -> None:
        """Answer request ``request_id`` with ``text``."""
        self._deliver(Answer(request_id, text))

    def hello(self, name: str = "fake", version: str = "1") -> None:
        """Say hello."""
        self._deliver(Hello(name, version))

    def ready(self) -> None:
        """Say the set-up is done."""
        self._deliver(Ready())

    def unexpected(self, kind: str | None = None) -> None:
        """Send a message that is no answer (None: an empty one)."""
        self._deliver(Unexpected(kind))

    def garbage(self, size: int = 7, error: str = "not a message (fake)") -> None:
        """Send ``size`` bytes that are not a message."""
        self._deliver(Garbage(size, error))

    def close(self, reason: Reason = Reason.DISCONNECTED, detail: str = "the stream ended (fake)") -> None:
        """End the stream from the seat's side (or the transport's: ``reason`` says which)."""
        self._deliver(Closed(reason, detail))


class FakeProcesses:
    """The processes behind the seats, as hooks a :class:`Match` takes (``**hooks()``).  A seat
    runs until :meth:`crash` or :meth:`freeze`; ``stderr`` and ``cpu`` are what the evidence and
    the CPU clock read."""

    def __init__(self) -> None:
        self.status: dict[int, tuple[Reason, str]] = {}
        self.stderr: dict[int, str] = {}
        self.cpu: dict[int, float] = {}
        self.settled: list[int] = []  # seats whose settle hook was awaited
        self.match: Match | None = None

    def hooks(self) -> dict[str, Any]:
        """The keyword arguments of :class:`Match` for these processes."""
        return {
            "probe": self.probe,
            "evidence": self.evidence,
            "settle": self.settle,
            "cpu_time": self.cpu_time,
        }

    def probe(self, seat: int) -> tuple[Reason, str] | None:
        """How seat ``seat``'s process ended or stalled (None: running)."""
        return self.status.get(seat)

    def evidence(self, seat: int) -> dict[str, Any]:
        """The stderr tail, as a launcher gives it."""
        return {"stderr_tail": self.stderr[seat]} if seat in self.stderr else {}

    async def settle(self, seat: int) -> None:
        """Nothing to wait for in memory (recorded, and one turn of the loop)."""
        self.settled.append(seat)
        await asyncio.sleep(0)

    def cpu_time(self, seat: int) -> float | None:
        """CPU seconds seat ``seat``'s process has used (None: unknown)."""
        return self.cpu.get(seat)

    def crash(self, seat: int, how: str = "the process exited with status 1", stderr: str = "") -> None:
        """Seat ``seat``'s process exits: the launcher tells the match (when there is one)."""
        self.status[seat] = (Reason.CRASHED, how)
        if stderr:
            self.stderr[seat] = stderr
        if self.match is not None:
            self.match.seat_process_exited(seat, how)

    def freeze(self, seat: int) -> None:
        """Seat ``seat``'s process is stopped (SIGSTOP): it answers nothing, and the probe says so."""
        self.status[seat] = (Reason.STALLED, "the process is stopped (frozen)")


# answer(table, channel, request) -> called for every request its seat receives
Answerer = Callable[["FakeTable", FakeChannel, Request], Awaitable[None]]

_GREEDY = GreedyPolicy()


async def greedy(table: FakeTable, channel: FakeChannel, request: Request) -> None:
    """An answerer that plays the greedy policy (greedy games end quickly)."""
    channel.answer(request.request_id, greedy_text(request))


def greedy_text(request: Request) -> str:
    """The greedy policy's answer to ``request``."""
    return str(_GREEDY.choose(request.state))


class FakeTable:
    """A real :class:`Match` whose seats are in-memory channels driven by answerers, and whose
    processes are :class:`FakeProcesses`."""

    def __init__(
        self,
        players: int = 2,
        *,
        seed: int = 1,
        control: TimeControl = GENEROUS,
        connect_timeout: float = 5.0,
        grace: float = 0.0,
        setup_time: float | None = None,
        processes: FakeProcesses | None = None,
        match: Match | None = None,
    ) -> None:
        self.processes = processes if processes is not None else FakeProcesses()
        self.grace = grace
        self.match = match or Match(
            [f"seat{k}" for k in range(players)],
            seed,
            control,
            connect_timeout=connect_timeout,
            setup_time=setup_time,
            **self.processes.hooks(),
        )
        self.processes.match = self.match
        self.channels: list[list[FakeChannel]] = [[] for _ in range(self.match.players)]  # per seat
        self._tasks: list[asyncio.Task[None]] = []
        self._answerers: list[Answerer] = []
        self._idle: list[tuple[int, FakeChannel]] = []  # attached before the loop ran

    def channel(self, seat: int) -> FakeChannel:
        """Seat ``seat``'s current channel."""
        return self.channels[seat][-1]

    def attach(self, seat: int, *, setup: bool = False) -> FakeChannel:
        """Connect seat ``seat`` now (its answerer then answers its requests)."""
        channel = FakeChannel()
        channel.link = self.match.attach(seat, channel, grace=self.grace, setup=setup)
        self._drive(seat, channel)
        return channel

    def reconnect(self, seat: int) -> FakeChannel:
        """Connect a seat whose stream dropped again, on a new channel."""
        if not self.match.can_reattach(seat):
            raise RuntimeError(f"seat {seat} cannot reconnect now (not away, out, or the match is over)")
        channel = FakeChannel()
        channel.link = self.match.reattach(seat, channel)
        self._drive(seat, channel)
        return channel

    def _drive(self, seat: int, channel: FakeChannel) -> None:
        """Answer the requests on ``channel`` (from :meth:`play` on, when attached before it)."""
        self.channels[seat].append(channel)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._idle.append((seat, channel))  # no loop yet: play() starts it
            return
        self._tasks.append(asyncio.create_task(self._seat(seat, channel)))

    async def _seat(self, seat: int, channel: FakeChannel) -> None:
        while (message := await channel.receive()) is not None:
            if isinstance(message, Request) and seat < len(self._answerers):
                await self._answerers[seat](self, channel, message)

    async def play(
        self, answerers: Sequence[Answerer], *, absent: Sequence[int] = (), timeout: float = 10.0
    ) -> MatchResult:
        """Play the match: seat k answered by ``answerers[k]``; the seats in ``absent`` are not
        connected (the test may attach them later).  Fails past ``timeout`` seconds."""
        self._answerers = list(answerers)
        idle, self._idle = self._idle, []
        self._tasks.extend(asyncio.create_task(self._seat(seat, channel)) for seat, channel in idle)
        for seat in range(self.match.players):
            if seat not in absent and not self.match.connected(seat):
                self.attach(seat)
        try:
            return await asyncio.wait_for(self.match.run(), timeout)
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
