"""Bot strength, measured honestly, in one run: duplicate dice, real bot processes, every seating.

Usage: .venv/bin/python benchmarks/strength.py [--games N] [--quick] [--parallel] [--jobs J]
                                                [--move-time S] [--cpu-time] [--seed S]
                                                [--only NAME ...] [--json FILE]

It plays, with what ``arena evaluate`` runs (the same match seeds under every seating, the bots as
real sandboxed processes kept running across matches, ``--move-time`` seconds per decision with a
5 s bank, every game played: no early stop):

* ``greedy-2p``, ``greedy-4p``: the sample ``greedy`` (one-ply, exact throw distribution) against
  ``greedy-naive`` (the project's first greedy) -- target at least +150 Elo;
* ``search-2p``, ``search-4p``: the sample ``search`` against the new ``greedy`` -- target at least
  +200 Elo with the 95 % interval's lower bound above +120, aim +300;
* with ``--extra``: ``search`` against ``greedy-naive`` and ``random`` (2 players), a
  self-consistency check that the search is not tuned to its own greedy only.

For each it prints the pairwise share, the Elo difference and the score difference with their 95 %
intervals, and every bot's decision time per decision -- p50, p99 and max, wall clock and CPU --
and its timeouts; at the end one summary line per match-up with its target.  ``--parallel`` plays
the match-ups at the same time (each with ``--jobs`` tables); ``--quick`` is a smoke run (4 games
per match-up) for the tests.  README's strength figures come from a full run of this script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from arena.evaluate_runner import EvaluationPlan, EvaluationReport, Progress, run_evaluation
from arena.evaluation import Percentiles
from arena.matchrunner import resolve_bot
from arena.referee import TimeControl

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Matchup:
    """One measurement: candidate vs baseline at a table size, with its target."""

    name: str
    candidate: str
    baseline: str
    players: int
    target: float  # Elo estimate at least this
    low: float | None  # and the interval's lower bound above this (None: above 0)


MATCHUPS = (
    Matchup("greedy-2p", "greedy", "greedy-naive", 2, 150.0, None),
    Matchup("greedy-4p", "greedy", "greedy-naive", 4, 150.0, None),
    Matchup("search-2p", "search", "greedy", 2, 200.0, 120.0),
    Matchup("search-4p", "search", "greedy", 4, 200.0, 120.0),
)
EXTRA = (
    Matchup("search-vs-naive-2p", "search", "greedy-naive", 2, 200.0, None),
    Matchup("search-vs-random-2p", "search", "random", 2, 400.0, None),
)


def _elo(x: float) -> str:
    return f"{x:+.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def _pct(p: Percentiles | None) -> str:
    if p is None:
        return "not measured"
    return f"p50 {p.p50 * 1000:.1f} ms, p99 {p.p99 * 1000:.1f} ms, max {p.max * 1000:.1f} ms (n={p.count})"


def verdict(m: Matchup, report: EvaluationReport) -> tuple[bool, str]:
    """Whether the target is met, and the summary line."""
    s = report.summary
    low_ok = s.elo.low > (m.low if m.low is not None else 0.0)
    met = s.elo.estimate >= m.target and low_ok
    bound = f"lower bound > {m.low:+.0f}" if m.low is not None else "interval excludes 0"
    line = (
        f"{m.name:<20} {s.candidate} vs {s.baseline}, {s.players}p: Elo {_elo(s.elo.estimate)} "
        f"[{_elo(s.elo.low)}, {_elo(s.elo.high)}] over {s.games} games -> target >= {m.target:+.0f}, "
        f"{bound}: {'met' if met else 'NOT met'}"
    )
    return met, line


def describe(m: Matchup, report: EvaluationReport) -> list[str]:
    """The lines printed for one match-up."""
    s = report.summary
    lines = [
        f"== {m.name}: {s.candidate} vs {s.baseline}, {s.players} players: {s.games} games "
        f"({s.groups} duplicate groups of {s.players}), {report.plan.control.describe()}, "
        f"{'sandboxed' if report.plan.sandbox is not None else 'NOT sandboxed'}",
        f"   pairwise share  {s.share.estimate:.3f}   95% [{s.share.low:.3f}, {s.share.high:.3f}]",
        f"   Elo difference  {_elo(s.elo.estimate)}   95% [{_elo(s.elo.low)}, {_elo(s.elo.high)}]"
        f"   ({s.elo_method})",
        f"   score diff      {s.score_difference.estimate:+.2f}   95% "
        f"[{s.score_difference.low:+.2f}, {s.score_difference.high:+.2f}]  (candidate minus mean baseline)",
        f"   {s.candidate} alone first in {s.wins} of {s.games} games; shared first in {s.draws}",
    ]
    for side, who in (("candidate", s.candidate), ("baseline", s.baseline)):
        t = report.timing[side]
        pct = t.percentiles()
        lines.append(f"   {who:<13} wall {_pct(pct['wall'])}")
        lines.append(f"   {'':<13} CPU  {_pct(pct['cpu'])}; timeouts {t.timeouts}")
    lines.append(
        f"   forfeits        {s.candidate} {s.forfeits['candidate']}, {s.baseline} {s.forfeits['baseline']}; "
        f"bot restarts {report.restarts}; wall time {report.duration:.0f} s; seeds "
        f"{report.plan.seed}..{report.plan.seed + s.groups - 1}"
    )
    return lines


async def measure(matchups: list[Matchup], args: argparse.Namespace) -> list[EvaluationReport]:
    """Run the match-ups (one after the other, or all at once with ``--parallel``)."""

    def plan(m: Matchup) -> EvaluationPlan:
        return EvaluationPlan(
            candidate=resolve_bot(m.candidate),
            baseline=resolve_bot(m.baseline),
            players=m.players,
            games=args.games,
            control=TimeControl(args.move_time, args.bank, cpu=args.cpu_time),
            jobs=args.jobs,
            seed=args.seed,
            sequential=None,
        )

    async def one(m: Matchup) -> EvaluationReport:
        shown: set[int] = set()

        def progress(p: Progress) -> None:
            if args.quiet or p.elo is None or p.groups % 10 or p.groups in shown:
                return
            shown.add(p.groups)
            print(f"   ... {m.name}: {p.games} games, Elo so far {_elo(p.elo.estimate)}", flush=True)

        report = await run_evaluation(plan(m), progress=progress)
        print("\n".join(describe(m, report)), flush=True)
        return report

    if args.parallel:
        return list(await asyncio.gather(*(one(m) for m in matchups)))
    return [await one(m) for m in matchups]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per match-up (default 400)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 4 games per match-up")
    parser.add_argument("--parallel", action="store_true", help="play the match-ups at the same time")
    parser.add_argument("--move-time", type=float, default=0.2)
    parser.add_argument("--bank", type=float, default=5.0)
    parser.add_argument("--cpu-time", action="store_true", help="charge the bots CPU time, not wall time")
    parser.add_argument("--jobs", type=int, default=1, help="tables per match-up")
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--extra", action="store_true", help="also search vs greedy-naive and random")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="only these match-ups (" + ", ".join(
            m.name for m in MATCHUPS + EXTRA) + ")",
    )  # fmt: skip
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--json", type=Path, help="also write the JSON summaries to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.games = 4
    chosen = list(MATCHUPS) + (list(EXTRA) if args.extra else [])
    if args.only:
        known = {m.name: m for m in MATCHUPS + EXTRA}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            parser.error(f"unknown match-up(s) {', '.join(unknown)}; choose from {', '.join(known)}")
        chosen = [known[n] for n in args.only]
    reports = asyncio.run(measure(chosen, args))
    print("\nsummary")
    results = []
    for m, report in zip(chosen, reports, strict=True):
        met, line = verdict(m, report)
        print("  " + line)
        results.append({"matchup": m.name, "target_met": met, **report.to_json()})
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
