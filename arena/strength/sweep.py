"""Paired sweeps: several variants of a policy against one opponent on the **same** duplicate
groups, each compared with the first variant group by group.

Two separate 400-game duels of two variants measure each share to about +-25 Elo, so a change
worth 10 Elo is invisible.  Played on the same seeds, most of the dice's luck is shared: the
per-group difference of the pairwise shares has a much smaller spread, and its mean (with a 95%
interval from the groups' standard error) measures the change to about +-9 Elo on 400 four-player
groups.  Games are played in-process as in :mod:`arena.strength.duel` (no referee, no clock), in
``--jobs`` worker processes; the results are deterministic (the same options give the same
figures, whatever the number of jobs).

    .venv/bin/python -m arena.strength.sweep --players 4 --seed 3000 --groups 400 \\
        "search:players=4" "search:players=4;chip=0.45"

Variants are :func:`arena.strength.duel.factory` names (``search:key=value;...``, ``search@...``,
``greedy``, ...); the first is the reference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path

from arena.engine.chance import SEED_LIMIT
from arena.evaluation import CONFIDENCE, elo_from_share, normal_quantile
from arena.lifecycle import start_resource_tracker
from arena.outpaths import output_problem

from .duel import POLICY_NAMES_HELP, HelpFormatter, factory, play_group

Z95 = normal_quantile(0.5 + CONFIDENCE / 2.0)  # the 95% intervals of arena.evaluation


@dataclass(frozen=True)
class VariantResult:
    """One variant's shares against the opponent and, for all but the reference, the paired
    difference from the reference (``diff`` +- ``half_width`` in share, ``elo_change`` its Elo)."""

    variant: str
    groups: int
    share: float
    elo: float
    diff: float | None = None
    half_width: float | None = None
    elo_change: float | None = None
    elo_change_low: float | None = None
    elo_change_high: float | None = None


def _clamped_elo(p: float) -> float:
    return elo_from_share(min(max(p, 1e-6), 1.0 - 1e-6))


def _group_share(job: tuple[str, str, int, int]) -> float:
    variant, against, players, seed = job
    return play_group(factory(variant), factory(against), players, seed).share


def paired(reference: Sequence[float], shares: Sequence[float], variant: str) -> VariantResult:
    """The paired comparison of ``shares`` with ``reference`` (one share per group, same seeds)."""
    n = len(shares)
    if n != len(reference) or n < 2:
        raise ValueError("a paired comparison needs the same two or more groups on both sides")
    mean = math.fsum(shares) / n
    d = [a - b for a, b in zip(shares, reference, strict=True)]
    md = math.fsum(d) / n
    sd = math.sqrt(math.fsum((x - md) ** 2 for x in d) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    base = mean - md  # the reference's mean share

    def change(delta: float) -> float:
        return _clamped_elo(base + delta) - _clamped_elo(base)

    return VariantResult(
        variant, n, mean, _clamped_elo(mean), md, half, change(md), change(md - half), change(md + half)
    )


def sweep(
    variants: Sequence[str], against: str, players: int, seed: int, groups: int, jobs: int = 2,
    report: bool = True,
) -> list[VariantResult]:  # fmt: skip
    """Play every variant on groups ``seed .. seed + groups - 1`` against ``against``; the first
    variant is the reference.  Prints a line per variant as it finishes when ``report``."""
    for name in (*variants, against):
        factory(name)  # an unknown name fails here, before any game
    results: list[VariantResult] = []
    reference: list[float] = []
    ctx = get_context("spawn")
    start_resource_tracker()  # a closed terminal's SIGHUP kills the sweep, not the pool's semaphores' remover
    with ctx.Pool(max(1, jobs)) as pool:
        for k, variant in enumerate(variants):
            start = time.monotonic()
            jobs_list = [(variant, against, players, seed + g) for g in range(groups)]
            shares = pool.map(_group_share, jobs_list, chunksize=max(1, min(4, groups // (4 * max(1, jobs)))))
            if k == 0:
                reference = shares
                mean = math.fsum(shares) / len(shares)
                result = VariantResult(variant, groups, mean, _clamped_elo(mean))
            else:
                result = paired(reference, shares, variant)
            results.append(result)
            if report:
                print(format_result(result) + f"  ({time.monotonic() - start:.0f} s)", flush=True)
    return results


def format_result(r: VariantResult) -> str:
    """One line: the variant, its share and Elo against the opponent, and the paired change."""
    line = f"{r.variant:48s} share {r.share:.4f}  Elo {r.elo:+.0f}"
    if r.diff is None:
        return line + "  (reference)"
    assert r.half_width is not None and r.elo_change is not None
    return (
        line + f"  paired: share {r.diff:+.4f} +- {r.half_width:.4f}, "
        f"Elo {r.elo_change:+.1f} [{r.elo_change_low:+.1f}, {r.elo_change_high:+.1f}]"
    )


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    ap = argparse.ArgumentParser(
        prog="python -m arena.strength.sweep",
        formatter_class=HelpFormatter,
        description=(
            "Paired sweep: play several variants of a policy against one opponent on the same\n"
            "duplicate groups (the same seeds, every seating), and compare each variant with the\n"
            "first, the reference, group by group.  On the same seeds most of the dice's luck is\n"
            "shared, so the paired difference is much more precise than two separate duels (about\n"
            "+-9 Elo on 400 four-player groups).  Games run in --jobs processes on this machine, as\n"
            "in arena.strength.duel (no referee, no clock); the same options give the same figures,\n"
            "whatever --jobs."
        ),
        epilog=POLICY_NAMES_HELP
        + """
each variant plays --groups duplicate groups, each --players games (one per seating), on seeds
--seed .. --seed + --groups - 1.  A line per variant is printed as it finishes: its share and
Elo against --against and, after the reference, the paired change with its 95% interval.

example:
  python -m arena.strength.sweep --players 4 --seed 3000 --groups 400 \\
      "search:players=4" "search:players=4;chip=0.45"
""",
    )
    ap.add_argument("variants", nargs="+", help="policy names; the first is the reference")
    ap.add_argument("--against", default="greedy", help="the opponent in every other seat")
    ap.add_argument("--players", type=int, default=4, choices=(2, 3, 4), help="players per game")
    ap.add_argument("--seed", type=int, default=1, help="first group's seed")
    ap.add_argument("--groups", type=int, default=100, help="duplicate groups per variant (at least 2)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (1 or more)")
    ap.add_argument(
        "--json", type=Path, metavar="FILE",
        help="also write the results to FILE, as JSON (missing folders are created; a path that "
        "cannot be written is refused before any game)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.groups < 2:
        ap.error("--groups must be at least 2 (a paired interval needs two groups)")
    if args.jobs < 1:
        ap.error(f"--jobs must be 1 or more (worker processes; this machine has {os.cpu_count()} CPUs)")
    if not 0 <= args.seed <= SEED_LIMIT - args.groups:
        ap.error("--seed must be 0 or more and --seed + --groups at most 2**63 (match seeds are below 2**63)")
    try:
        for name in (*args.variants, args.against):
            factory(name)
    except ValueError as exc:
        ap.error(str(exc))
    if args.json is not None and (problem := output_problem(args.json)) is not None:
        print(f"error: cannot write {args.json}: {problem}; give another path", file=sys.stderr)
        return 2
    print(
        f"paired sweep: {len(args.variants)} variant(s) against {args.against}, {args.players} players, "
        f"groups {args.seed}..{args.seed + args.groups - 1} ({args.groups * args.players} games each)",
        flush=True,
    )
    results = sweep(args.variants, args.against, args.players, args.seed, args.groups, args.jobs)
    if args.json is not None:
        text = json.dumps([asdict(r) for r in results], indent=2) + "\n"
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(text, encoding="utf-8")
        except OSError as exc:
            sys.stdout.write(text)  # the results are not lost
            sys.stdout.flush()
            reason = exc.strerror or str(exc)
            print(
                f"error: cannot write {args.json}: {reason}; the JSON went to standard output instead",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    from arena.strength.entry import run_tool

    run_tool(main)
