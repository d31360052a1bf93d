"""How much stronger is the search bot than the greedy bot?  Duplicate dice, real bot processes.

Usage: .venv/bin/python benchmarks/strength.py [--games N] [--players 2 4] [--move-time S]
                                                [--jobs J] [--seed S] [--sequential] [--json FILE]

For each table size (default: 2 players, then 4 players with one search bot against three greedy
bots) it runs what ``arena evaluate bots/search_bot.py --vs greedy`` runs: the same match seeds
under every seating, the bots as real processes kept running across matches (persistent
sessions on one referee), ``--move-time`` seconds per decision (default 0.2) with a 5 s bank.
By default it plays every game (no early stop), so the intervals rest on the full sample; the
sequential test's verdict is still reported (the group at which it would have stopped).

It prints, per table size: the pairwise share, the Elo difference and the mean score difference
with their 95 % intervals, the game count, and the search bot's think time per decision (mean and
max, on the referee's clock); at the end one line per size and whether the issue's target
(at least +150 Elo, interval excluding 0) is met.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from pathlib import Path

from arena.evaluate_runner import EvaluationPlan, EvaluationReport, Progress, run_evaluation
from arena.evaluation import SprtConfig, sprt
from arena.matchrunner import resolve_bot
from arena.referee import TimeControl

TARGET_ELO = 150.0
ROOT = Path(__file__).resolve().parent.parent


def _elo(x: float) -> str:
    return f"{x:+.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def _cpu(seconds: float | None) -> str:
    return "" if seconds is None else f" (bot process CPU {seconds * 1000:.1f} ms per decision)"


def describe(report: EvaluationReport) -> list[str]:
    """The lines printed for one table size."""
    s = report.summary
    cand = report.timing["candidate"]
    base = report.timing["baseline"]
    verdict = sprt([g.share for g in report.groups], SprtConfig())
    return [
        f"== {s.candidate} vs {s.baseline}, {s.players} players: {s.games} games "
        f"({s.groups} duplicate groups of {s.players}), {report.plan.control.describe()}",
        f"   pairwise share  {s.share.estimate:.3f}   95% [{s.share.low:.3f}, {s.share.high:.3f}]",
        f"   Elo difference  {_elo(s.elo.estimate)}   95% [{_elo(s.elo.low)}, {_elo(s.elo.high)}]"
        f"   ({s.elo_method})",
        f"   score diff      {s.score_difference.estimate:+.2f}   95% "
        f"[{s.score_difference.low:+.2f}, {s.score_difference.high:+.2f}]  (search minus mean greedy)",
        f"   search alone first in {s.wins} of {s.games} games; shared first in {s.draws}",
        f"   think/decision  search: mean {cand.mean * 1000:.1f} ms, max {cand.max * 1000:.1f} ms "
        f"over {cand.decisions} decisions{_cpu(cand.cpu_mean)}; greedy: mean {base.mean * 1000:.1f} ms, "
        f"max {base.max * 1000:.1f} ms{_cpu(base.cpu_mean)}  (wall clock, referee side)",
        f"   forfeits        search {s.forfeits['candidate']}, greedy {s.forfeits['baseline']}; "
        f"bot restarts {report.restarts}",
        f"   SPRT(0, +150)   {verdict.decision} after {verdict.groups} groups (LLR {verdict.llr:+.2f})",
        f"   wall time       {report.duration:.0f} s; seeds {report.plan.seed}.."
        f"{report.plan.seed + s.groups - 1}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per table size")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], choices=[2, 3, 4])
    parser.add_argument("--move-time", type=float, default=0.2)
    parser.add_argument("--bank", type=float, default=5.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--sequential", action="store_true", help="stop early when the SPRT decides")
    parser.add_argument("--candidate", default=str(ROOT / "bots" / "search_bot.py"))
    parser.add_argument("--baseline", default="greedy")
    parser.add_argument("--json", type=Path, help="also write the JSON summaries to this file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()

    candidate, baseline = resolve_bot(args.candidate), resolve_bot(args.baseline)
    results = []
    lines = []
    shown = {0}

    def progress(p: Progress) -> None:
        if args.quiet or p.share is None or p.elo is None or p.groups % 10 or p.groups in shown:
            return
        shown.add(p.groups)
        print(
            f"   ... {p.games} games, {p.groups} groups: share {p.share.estimate:.3f}, "
            f"Elo {_elo(p.elo.estimate)} [{_elo(p.elo.low)}, {_elo(p.elo.high)}] (t-interval)",
            flush=True,
        )

    for players in args.players:
        shown.clear()
        shown.add(0)
        plan = EvaluationPlan(
            candidate=candidate,
            baseline=baseline,
            players=players,
            games=args.games,
            control=TimeControl(args.move_time, args.bank),
            jobs=args.jobs,
            seed=args.seed,
            sequential=SprtConfig() if args.sequential else None,
        )
        report = asyncio.run(run_evaluation(plan, progress=progress))
        text = describe(report)
        print("\n".join(text), flush=True)
        results.append(report.to_json())
        s = report.summary
        met = s.elo.estimate >= TARGET_ELO and s.significant
        lines.append(
            f"{players} players: Elo {_elo(s.elo.estimate)} [{_elo(s.elo.low)}, {_elo(s.elo.high)}] "
            f"over {s.games} games -> target (>= +{TARGET_ELO:.0f}, interval excludes 0) "
            f"{'met' if met else 'NOT met'}"
        )
    print("\nsummary")
    for line in lines:
        print("  " + line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
