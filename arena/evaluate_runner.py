"""Run a duplicate-dice evaluation (what ``arena evaluate`` does): real bots, in parallel.

One :class:`~arena.hosting.MatchHost` hosts every match, its bots sandboxed unless the plan says
``sandbox=None``.  Each of the ``jobs`` parallel *tables* has its own bot processes, one set per
seating (a candidate and ``players - 1`` baselines for each seat the candidate takes), kept
running with **persistent sessions**, so a bot process plays match after match on the same token
(no start-up cost per game, as in ``benchmarks/referee.py``) and never two seatings of one seed:
those have the same dice, and a process that remembered them would play the second knowing its
throws (the host would start a fresh one instead).  A table takes the next (group, candidate
seat) task from a shared queue and plays it with the candidate in that seat and the baselines in
the others.  A bot that forfeited (or whose process died) is replaced before the table's next
match.

What to play next is the format :class:`~arena.tournament.formats.sequential.SequentialDuplicate`
(pulled whenever a table is free): groups are fed to the sequential test in seed order (see
:mod:`arena.evaluation`); when it decides, no further match is started, the matches already
running are finished, and the summary covers every complete group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.engine.chance import SEED_LIMIT
from arena.evaluation import (
    GameOutcome,
    GroupOutcome,
    Interval,
    Percentiles,
    SprtConfig,
    SprtState,
    Summary,
    elo_from_share,
    mean_interval,
    seatings,
    summarize,
)
from arena.hosting import KEPT_LIMIT, BotSpec, LocalSeat, MatchHost
from arena.referee import MatchResult, RefereeConfig, TimeControl
from arena.sandbox import SandboxLimits
from arena.tournament.formats import Finished, History, Play, Recorded, Settings
from arena.tournament.formats.sequential import SequentialDuplicate, sprt_options


@dataclass(frozen=True)
class EvaluationPlan:
    """What to evaluate and how."""

    candidate: BotSpec
    baseline: BotSpec
    players: int = 2
    games: int = 200  # at most; rounded up to whole duplicate groups
    control: TimeControl = field(default_factory=lambda: TimeControl(0.2, 5.0))
    jobs: int = 2
    seed: int = 0
    sequential: SprtConfig | None = field(default_factory=SprtConfig)
    log_dir: Path | None = None
    sandbox: SandboxLimits | None = field(default_factory=SandboxLimits)  # None: unsandboxed

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 4:
            raise ValueError(f"players must be 2..4, got {self.players}")
        if self.games < 1 or self.jobs < 1:
            raise ValueError("games and jobs must be at least 1")
        if not 0 <= self.seed < SEED_LIMIT:
            raise ValueError("the seed must satisfy 0 <= seed < 2**63")

    @property
    def groups(self) -> int:
        """Duplicate groups to play at most."""
        return math.ceil(self.games / self.players)

    def group_seed(self, index: int) -> int:
        """The match seed of group ``index`` (consecutive seeds from ``seed``)."""
        return (self.seed + index) % SEED_LIMIT


@dataclass
class Timing:
    """Think time per decision of one side: totals from the referee's clocks, and every
    decision's wall-clock and CPU time from the match records (``ms``, ``cpu_ms``) for the
    percentiles.  Forced and automatic decisions (the referee answered) are not counted."""

    decisions: int = 0
    total: float = 0.0
    max: float = 0.0
    cpu: float = 0.0  # CPU seconds of the bot processes during the games (all of it, not only
    cpu_decisions: int = 0  # while deciding), over the decisions of the games that had it
    walls: list[float] = field(default_factory=list)  # seconds, one per decision asked
    cpus: list[float] = field(default_factory=list)  # seconds, one per decision with a CPU figure
    timeouts: int = 0  # forfeits by timeout

    def add(self, decisions: int, total: float, longest: float, cpu: float | None = None) -> None:
        """Account one seat of one game."""
        self.decisions += decisions
        self.total += total
        self.max = max(self.max, longest)
        if cpu is not None:
            self.cpu += cpu
            self.cpu_decisions += decisions

    def add_decision(self, wall: float, cpu: float | None) -> None:
        """Account one decision's wall-clock (and, when measured, CPU) seconds."""
        self.walls.append(wall)
        if cpu is not None:
            self.cpus.append(cpu)

    @property
    def mean(self) -> float:
        """Mean seconds per decision (0 without decisions)."""
        return self.total / self.decisions if self.decisions else 0.0

    @property
    def cpu_mean(self) -> float | None:
        """Mean CPU seconds of the bot process per decision, when the launcher could measure it."""
        return self.cpu / self.cpu_decisions if self.cpu_decisions else None

    def percentiles(self) -> dict[str, Percentiles | None]:
        """``{"wall": ..., "cpu": ...}``: p50, p99 and max of the decisions (None without data)."""
        return {
            "wall": Percentiles.of(self.walls) if self.walls else None,
            "cpu": Percentiles.of(self.cpus) if self.cpus else None,
        }

    def to_json(self) -> dict[str, object]:
        """Milliseconds, rounded."""
        cpu = self.cpu_mean
        out: dict[str, object] = {
            "decisions": self.decisions,
            "mean_ms": round(self.mean * 1000, 3),
            "max_ms": round(self.max * 1000, 3),
            "cpu_mean_ms": None if cpu is None else round(cpu * 1000, 3),
            "timeouts": self.timeouts,
        }
        for kind, p in self.percentiles().items():
            out[f"{kind}_ms"] = None if p is None else p.to_json()
        return out


def record_times(replay: str) -> list[tuple[int, float, float | None]]:
    """(seat, wall seconds, CPU seconds or None) of every decision a bot answered in a match
    record (decision lines with ``ms``; forced and automatic ones have none)."""
    out = []
    for line in replay.splitlines():
        if '"ms"' not in line:
            continue
        event = json.loads(line)
        if "seat" in event and "ms" in event and "action" in event:
            cpu = event.get("cpu_ms")
            out.append((int(event["seat"]), event["ms"] / 1000.0, None if cpu is None else cpu / 1000.0))
    return out


@dataclass
class ForfeitReason:
    """One reason a side's bots forfeited, with how often, and its first occurrence (the detail
    says what went wrong; the seed and seat find the game)."""

    reason: str
    count: int
    detail: str  # the first such forfeit's detail
    seed: int
    seat: int

    def to_json(self) -> dict[str, object]:
        """As ``arena evaluate --json`` prints it."""
        return {"reason": self.reason, "count": self.count, "first": {"detail": self.detail,
                "seed": self.seed, "seat": self.seat}}  # fmt: skip


@dataclass(frozen=True)
class Progress:
    """What the runner reports after every game (cheap to compute: no bootstrap here, since the
    callback runs on the referee's event loop between decisions)."""

    games: int
    groups: int
    planned_groups: int
    sprt: SprtState | None
    share: Interval | None  # pairwise share with a t-interval over the complete groups

    @property
    def elo(self) -> Interval | None:
        """The share as Elo."""
        return self.share.map(elo_from_share) if self.share is not None else None


@dataclass
class EvaluationReport:
    """The result: the statistics, the groups, timing and how the run ended."""

    plan: EvaluationPlan
    summary: Summary
    groups: list[GroupOutcome]
    timing: dict[str, Timing]
    duration: float
    stopped_early: bool
    restarts: int
    forfeit_reasons: dict[str, list[ForfeitReason]] = field(default_factory=dict)  # by side
    interrupted: bool = False  # stopped by a signal: the figures are of the groups completed by then

    def to_json(self) -> dict[str, object]:
        """The JSON summary ``arena evaluate --json`` prints."""
        out = self.summary.to_json()
        control = self.plan.control
        out.update(
            seed=self.plan.seed,
            seeds=[g.seed for g in self.groups],
            move_time=control.move_time,
            bank=control.bank,
            jobs=self.plan.jobs,
            planned_groups=self.plan.groups,
            stopped_early=self.stopped_early,
            interrupted=self.interrupted,
            duration_s=round(self.duration, 3),
            think_time={side: t.to_json() for side, t in self.timing.items()},
            bot_restarts=self.restarts,
            forfeit_reasons={
                side: [r.to_json() for r in reasons] for side, reasons in self.forfeit_reasons.items()
            },
        )
        return out


class _Pull:
    """The runner's side of the evaluation's format (:class:`SequentialDuplicate`): a table that
    is free takes the next match the format handed out, asking the format for more when none is
    left, until the format is finished (the sequential test decided, or every group is out)."""

    def __init__(self, plan: EvaluationPlan) -> None:
        settings = Settings(
            entries=plan.players,
            table_sizes=(plan.players,),
            games=plan.groups,
            seed=plan.seed,
            options={"sprt": sprt_options(plan.sequential), "ahead": plan.jobs},
        )
        self.format = SequentialDuplicate(settings)
        self.matches: list[Recorded] = []
        self.changed = asyncio.Event()
        self.over = False

    def history(self) -> History:
        return History(tuple(self.matches))

    def sprt_state(self) -> SprtState | None:
        """The sequential test over the groups complete so far."""
        return self.format.test(self.history())

    async def take(self) -> int | None:
        """The index of the next match to play (now running), or None: nothing more to play."""
        while True:
            for i, m in enumerate(self.matches):
                if m.status == "queued":
                    self.matches[i] = replace(m, status="running")
                    return i
            if self.over:
                return None
            answer = self.format.next(self.history())
            if isinstance(answer, Play):
                for p in answer.pairings:
                    self.matches.append(
                        Recorded(len(self.matches), p.round, p.group, p.seed, p.seating, "queued")
                    )
            elif isinstance(answer, Finished):
                self.over = True  # matches handed out but not started are not started any more
                return None
            else:
                self.changed.clear()
                await self.changed.wait()

    def done(self, i: int, result: MatchResult) -> None:
        self.matches[i] = replace(
            self.matches[i], status="finished", placings=result.placings, scores=result.scores
        )
        self.changed.set()


def _outcome(result: MatchResult, seed: int, candidate_seat: int) -> GameOutcome:
    return GameOutcome(
        seed=seed,
        candidate_seat=candidate_seat,
        scores=result.scores,
        placings=result.placings,
        termination=result.termination,
        forfeits=tuple(f.seat for f in result.forfeits),
    )


async def run_evaluation(
    plan: EvaluationPlan,
    *,
    progress: Callable[[Progress], None] | None = None,
    config: RefereeConfig | None = None,
    on_interrupt: Callable[[EvaluationReport], None] | None = None,
) -> EvaluationReport:
    """Play the evaluation ``plan`` describes and return its report.  Cancelled (a stop signal)
    after at least one complete duplicate group, it hands ``on_interrupt`` the report of the
    groups completed so far (``interrupted`` set) before the cancellation goes on."""
    start = time.monotonic()
    # every table keeps one set of bots per seating (plan.players of each): all of them stay running
    kept = max(KEPT_LIMIT, plan.jobs * plan.players * plan.players)
    host = MatchHost(sandbox=plan.sandbox, config=config, log_dir=plan.log_dir, label="eval", kept_limit=kept)
    seats = seatings(plan.players)
    pull = _Pull(plan)
    pending: dict[int, dict[int, GameOutcome]] = {}
    complete: list[GroupOutcome] = []  # in seed order, contiguous
    finished: dict[int, GroupOutcome] = {}
    timing = {"candidate": Timing(), "baseline": Timing()}
    reasons: dict[str, list[ForfeitReason]] = {"candidate": [], "baseline": []}
    games_done = 0

    def record(g: int, seat: int, result: MatchResult) -> None:
        nonlocal games_done
        games_done += 1
        for s in result.seats:
            side = "candidate" if s.seat == seat else "baseline"
            timing[side].add(s.decisions, s.think_total, s.think_max, s.cpu_time)
        for s_seat, wall, cpu in record_times(result.replay):
            timing["candidate" if s_seat == seat else "baseline"].add_decision(wall, cpu)
        for f in result.forfeits:
            side = "candidate" if f.seat == seat else "baseline"
            if str(f.reason) == "timeout":
                timing[side].timeouts += 1
            known = next((r for r in reasons[side] if r.reason == str(f.reason)), None)
            if known is None:
                reasons[side].append(ForfeitReason(str(f.reason), 1, f.detail, plan.group_seed(g), f.seat))
            else:
                known.count += 1
        pending.setdefault(g, {})[seat] = _outcome(result, plan.group_seed(g), seat)
        if len(pending[g]) == len(seats):
            games = pending.pop(g)
            finished[g] = GroupOutcome(plan.group_seed(g), tuple(games[s] for s in seats))
        while len(complete) in finished:
            complete.append(finished.pop(len(complete)))
        if progress is not None:
            share = None
            if complete:
                pooled = math.fsum(g.points for g in complete) / sum(g.pairings for g in complete)
                iv = mean_interval([g.share for g in complete])
                share = Interval(pooled, max(0.0, iv.low), min(1.0, iv.high))
            progress(Progress(games_done, len(complete), plan.groups, pull.sprt_state(), share))

    async def worker(table: int) -> None:
        specs = [plan.candidate] + [plan.baseline] * (plan.players - 1)
        roles = ["candidate"] + [f"baseline{k}" for k in range(1, plan.players)]
        while (i := await pull.take()) is not None:
            m = pull.matches[i]
            seat = m.seating.index(0)
            seated = [
                LocalSeat(specs[k], persistent=True, identity=(table, seat, k), label=f"t{table}-{roles[k]}")
                for k in m.seating
            ]
            result = await host.play(seated, m.seed, plan.control, match_id=f"ev{m.round:05d}-seat{seat}")
            pull.done(i, result)
            record(m.round, seat, result)

    def report(interrupted: bool = False) -> EvaluationReport:
        state = pull.sprt_state()
        summary = summarize(
            plan.candidate.name,
            plan.baseline.name,
            complete,
            sprt_config=plan.sequential,
            sprt_state=state,
        )
        return EvaluationReport(
            plan=plan,
            summary=summary,
            groups=list(complete),
            timing=timing,
            duration=time.monotonic() - start,
            stopped_early=state is not None and state.stopped and len(complete) < plan.groups,
            restarts=host.restarts,
            forfeit_reasons={side: sorted(r, key=lambda x: -x.count) for side, r in reasons.items() if r},
            interrupted=interrupted,
        )

    try:
        await host.start()
        await asyncio.gather(*(worker(j) for j in range(min(plan.jobs, plan.groups * len(seats)))))
    except asyncio.CancelledError:
        if on_interrupt is not None and complete:
            on_interrupt(report(interrupted=True))  # what was measured is not thrown away
        raise
    finally:
        with contextlib.suppress(Exception):
            await host.close(0.5)
    if not complete:
        raise RuntimeError("no duplicate group was completed")
    return report()
