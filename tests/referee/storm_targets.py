"""Fuzz target (Hypothesis) for the reconnection path: ``tests/referee/test_fuzz_reconnect.py``
runs it with modest examples, ``benchmarks/fuzz.py --target reconnect`` with 10,000.

The promise: the reconnection path is total.  A seat with a grace whose stream drops, comes back (at once,
a little later, too late or never), flaps hundreds of times, ends its stream for another reason,
or sends noise in between, at any request of its own and during its opponent's decisions: the
real Match always ends, nothing escapes it, the seat plays on or forfeits with a detail (never
an "arena bug"), its opponent is untouched, its inbox never holds more than the flood limit, and
the record replays through the engine.  In memory (:mod:`arena.referee.fakechannel`), so a
Hypothesis example is a whole match in well under a second."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from hypothesis import strategies as st

from arena.engine import replay
from arena.referee import MatchResult, Reason, TimeControl
from arena.referee.channel import Request
from arena.referee.fakechannel import FakeChannel, FakeTable, greedy_text
from arena.referee.seatlink import INBOX_LIMIT

GRACE = 0.1  # seconds a dropped seat may take to come back
FUZZED = 1  # the seat that follows the plan; seat 0 plays greedy


@dataclass(frozen=True)
class Drop:
    """The stream drops; the seat comes back after ``after`` seconds (None: never)."""

    after: float | None


@dataclass(frozen=True)
class Flap:
    """``times`` drops, each followed at once by a return."""

    times: int


@dataclass(frozen=True)
class End:
    """The stream ends for good, for ``reason``."""

    reason: Reason


@dataclass(frozen=True)
class Noise:
    """A message that answers nothing (``hello``, ``ready``, ``unexpected``) or bytes that are
    not a message (``garbage``)."""

    kind: str


@dataclass(frozen=True)
class Pause:
    seconds: float


Step = Drop | Flap | End | Noise | Pause

STEPS: st.SearchStrategy[Step] = st.one_of(
    st.builds(Drop, st.sampled_from([0.0, 0.001, 0.02, GRACE / 2, GRACE * 3, None])),
    st.builds(Flap, st.integers(1, 300)),
    st.builds(End, st.sampled_from([Reason.DISCONNECTED, Reason.CRASHED, Reason.MALFORMED_ACTION])),
    st.builds(Noise, st.sampled_from(["hello", "ready", "unexpected", "garbage"])),
    st.builds(Pause, st.sampled_from([0.0, 0.005, 0.03])),
)
Plans = dict[int, tuple[Step, ...]]  # steps by request ordinal (1: the first)
# per request of the fuzzed seat (its own plans) and of its opponent (what it does meanwhile)
STORM_PLANS: st.SearchStrategy[Plans] = st.dictionaries(
    st.integers(1, 40), st.lists(STEPS, max_size=4).map(tuple), max_size=6
)


class Storm:
    """Seat :data:`FUZZED`'s behaviour: ``own[k]`` at its k-th request, ``meanwhile[k]`` at its
    opponent's k-th request; then it answers (the greedy's choice) whenever it can."""

    def __init__(self, table: FakeTable, own: Plans, meanwhile: Plans) -> None:
        self.table = table
        self.own = own
        self.meanwhile = meanwhile
        self.asked: dict[int, int] = {}  # request id -> its ordinal among the seat's requests
        self.opponent_asked = 0
        self.inbox_max = 0

    def _back(self) -> None:
        if self.table.match.can_reattach(FUZZED):
            self.table.reconnect(FUZZED)

    async def run(self, steps: tuple[Step, ...]) -> None:
        table = self.table
        for step in steps:
            if FUZZED in table.match.forfeits or table.match.done.is_set():
                return
            link = table.match.links[FUZZED]
            channel = table.channel(FUZZED)
            away = link.can_come_back()
            if isinstance(step, Drop) and not away:
                channel.close(detail="connection reset (fuzz)")
                if step.after is not None:
                    asyncio.get_running_loop().call_later(step.after, self._back)
            elif isinstance(step, Flap):
                for _ in range(step.times):
                    if FUZZED in table.match.forfeits or table.match.done.is_set():
                        return
                    if not link.can_come_back():
                        table.channel(FUZZED).close(detail="connection reset (fuzz)")
                    self._back()
            elif isinstance(step, End) and not away:
                channel.close(step.reason, detail=f"ended for the fuzz ({step.reason})")
            elif isinstance(step, Noise) and not away:
                if step.kind == "hello":
                    channel.hello("storm", "1")
                elif step.kind == "ready":
                    channel.ready()
                elif step.kind == "unexpected":
                    channel.unexpected()
                else:
                    channel.garbage()
            elif isinstance(step, Pause):
                await asyncio.sleep(step.seconds)
            self.inbox_max = max(self.inbox_max, link.inbox.qsize())

    async def fuzzed(self, table: FakeTable, channel: FakeChannel, request: Request) -> None:
        rid = request.request_id
        first = rid not in self.asked
        if first:
            self.asked[rid] = len(self.asked) + 1
            await self.run(self.own.get(self.asked[rid], ()))
        current = table.channel(FUZZED)
        if current is channel and not channel.finished and not table.match.links[FUZZED].can_come_back():
            channel.answer(rid, greedy_text(request))

    async def opponent(self, table: FakeTable, channel: FakeChannel, request: Request) -> None:
        self.opponent_asked += 1
        await self.run(self.meanwhile.get(self.opponent_asked, ()))
        channel.answer(request.request_id, greedy_text(request))


def check_storm(own: Plans, meanwhile: Plans, seed: int) -> MatchResult:
    """Play one match of a greedy seat 0 against seat 1 following the plans; check the promises."""

    async def play() -> tuple[MatchResult, Storm]:
        table = FakeTable(seed=seed, control=TimeControl(move_time=2.0, bank=2.0), grace=GRACE)
        storm = Storm(table, own, meanwhile)
        answerers = [storm.opponent, storm.fuzzed]
        return await table.play(answerers, timeout=60.0), storm

    result, storm = asyncio.run(play())
    rep = replay(result.replay)  # raises unless it replays exactly
    assert rep.result["scores"] == list(result.scores)
    assert storm.inbox_max <= INBOX_LIMIT + 1, storm.inbox_max
    for forfeit in result.forfeits:
        assert forfeit.seat == FUZZED, result.forfeits
        assert forfeit.reason in (Reason.DISCONNECTED, Reason.CRASHED, Reason.MALFORMED_ACTION), forfeit
        assert forfeit.detail and "arena bug" not in forfeit.detail, forfeit.detail
    if not result.forfeits:
        assert result.termination in ("normal", "round-cap")
    return result
