"""Fast duplicate-dice games in one process, for tuning (no referee, no bot processes, no clock).

``arena evaluate`` is the measurement of record (real bots, real time limits); this plays the
same kind of duplicate groups -- one seed under every seating, the candidate in each seat once
against ``players - 1`` copies of the baseline -- with policies called directly, so a tuning run
of a hundred games takes about a minute on one core.  Summaries use :mod:`arena.evaluation`.

    .venv/bin/python -m arena.strength.duel search greedy --players 2 --games 100
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from arena.engine import GreedyPolicy, Policy, RandomPolicy, play_game
from arena.engine.chance import SEED_LIMIT
from arena.evaluation import GameOutcome, GroupOutcome, Summary, summarize

if TYPE_CHECKING:
    from .search import Params

PolicyFactory = Callable[[int, int], Policy]  # (seed, seat) -> a fresh policy for one game


def factory(name: str) -> PolicyFactory:
    """A policy factory by name: ``greedy``, ``greedy-naive``, ``random``, ``search``,
    ``search:key=value;...`` (parameters, :func:`params_from_text`) or ``search@package.module:name``
    (a worth model or state value, :func:`arena.strength.search.load_worth_model`)."""
    if name == "greedy":
        from .greedy import OnePlyGreedy

        return lambda seed, seat: OnePlyGreedy()
    if name == "greedy-naive":
        return lambda seed, seat: GreedyPolicy()
    if name == "random":
        return lambda seed, seat: RandomPolicy(f"{seed}:{seat}")
    if name.startswith("search@"):  # search@package.module:name -- the leaf-evaluation hook
        from .search import SearchPolicy, load_worth_model

        model = load_worth_model(name.partition("@")[2])
        return lambda seed, seat: SearchPolicy(worth_model=model)
    if name == "search" or name.startswith("search:"):
        from .search import SearchPolicy

        params = params_from_text(name.partition(":")[2]) if ":" in name else None
        return lambda seed, seat: SearchPolicy(params)
    raise ValueError(f"unknown policy {name!r} (greedy, greedy-naive, random, search)")


def params_from_text(text: str) -> Params:
    """Search parameters from ``key=value;...`` overrides (for tuning): ``setup=0,0,3,2,1,0``,
    ``lam=...``, ``rho=...``, ``chip=0.45``, ``horizon``, ``pace``, ``focus``, ``last_turn_scale``, ``risk``,
    ``players=4`` (start from that table size's defaults)."""
    from dataclasses import fields as dataclass_fields

    from .search import Params
    from .worth import Potential

    fields: dict[str, str] = {}
    for part in text.split(";"):
        if not part:
            continue
        key, sep, val = part.partition("=")
        if not sep or not key:
            raise ValueError(f"a search parameter is key=value, got {part!r}")
        fields[key.strip()] = val.strip()
    low_keys = {f.name for f in dataclass_fields(Potential)}
    top_keys = {f.name for f in dataclass_fields(Params)} - {"potential"}
    unknown = sorted(set(fields) - low_keys - top_keys - {"players"})
    if unknown:
        known = ", ".join([*sorted(low_keys | top_keys), "players"])
        raise ValueError(f"unknown search parameter(s) {', '.join(unknown)}; known: {known}")
    try:
        base = Params.for_players(int(fields.pop("players", "2")))
        pot = base.potential
        top: dict[str, object] = {}
        low: dict[str, object] = {}
        for k, v in fields.items():
            value: object
            if k == "final_round_result":
                if v not in ("0", "1"):
                    raise ValueError(f"final_round_result is 0 or 1, got {v!r}")
                value = v == "1"
            elif k == "max_spend":
                value = int(v)
            else:
                value = tuple(_finite(x) for x in v.split(",")) if "," in v else _finite(v)
            (low if k in low_keys else top)[k] = value
        return replace(base, potential=replace(pot, **low), **top)  # type: ignore[arg-type]
    except ValueError as exc:  # a number, or a parameter's shape or range (lam=1,2; pace=0)
        raise ValueError(f"bad search parameters {text!r}: {exc}") from None


def _finite(text: str) -> float:
    """A parameter's number; nan and infinities are refused (they would silently turn every
    worth they touch into nan, and the search would then choose by the order of the actions)."""
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text.strip()!r} is not a finite number")
    return x


def play_group(candidate: PolicyFactory, baseline: PolicyFactory, players: int, seed: int) -> GroupOutcome:
    """One duplicate group: ``seed`` with the candidate in every seat once."""
    games = []
    for seat in range(players):
        policies = [candidate(seed, s) if s == seat else baseline(seed, s) for s in range(players)]
        out = play_game(seed, policies, record=False).outcome
        games.append(GameOutcome(seed, seat, out.scores, out.placings, out.termination))
    return GroupOutcome(seed, tuple(games))


def duel(
    candidate: PolicyFactory,
    baseline: PolicyFactory,
    players: int,
    groups: int,
    seed: int = 1,
    progress: Callable[[list[GroupOutcome]], None] | None = None,
    names: tuple[str, str] = ("candidate", "baseline"),
) -> Summary:
    """Play ``groups`` duplicate groups from ``seed`` on and summarise them."""
    done: list[GroupOutcome] = []
    for g in range(groups):
        done.append(play_group(candidate, baseline, players, seed + g))
        if progress is not None:
            progress(done)
    return summarize(names[0], names[1], done)


POLICY_NAMES_HELP = """\
policy names (for CANDIDATE and BASELINE of duel, the VARIANTS and --against of sweep):
  greedy, greedy-naive, random, search
                  the built-in policies, by name
  search:key=value;...
                  search with parameters changed, e.g. "search:players=4;chip=0.45"
                  (quote it: ';' ends a shell command); players=N starts from that table
                  size's defaults; an unknown key is refused with the list of known keys
  search@package.module:name
                  search whose leaf evaluation is the worth model (or state value
                  function (state, seat) -> float) that module attribute names
"""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Every option's default in its help, the description and epilog kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:  # an option that is off unless given: no "(default: None)"
            return action.help
        return super()._get_help_string(action)


def main(argv: list[str] | None = None) -> int:
    """Command line: candidate and baseline names, players, games, seed."""
    ap = argparse.ArgumentParser(
        prog="python -m arena.strength.duel",
        formatter_class=HelpFormatter,
        description=(
            "Play duplicate-dice games of a candidate policy against a baseline in this process (no\n"
            "referee, no bot processes, no clock) and print the candidate's pairwise share, Elo and\n"
            "score difference with 95% intervals.  For tuning: 'arena evaluate' (real bots, real\n"
            "time limits) is the measurement of record."
        ),
        epilog=POLICY_NAMES_HELP
        + """
games come in duplicate groups: one seed under every seating, the candidate in each seat once
against --players - 1 copies of the baseline, so a group is --players games.  --games is
rounded down to whole groups, and at least two groups are needed for an interval.

example:
  python -m arena.strength.duel search greedy --players 2 --games 100 --seed 1
""",
    )
    ap.add_argument("candidate", help="the policy measured (see policy names below)")
    ap.add_argument("baseline", help="the policy in every other seat")
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players per game")
    ap.add_argument(
        "--games", type=int, default=100,
        help="games to play: at least 2 x --players, rounded down to a multiple of --players",
    )  # fmt: skip
    ap.add_argument("--seed", type=int, default=1, help="first group's seed (group k plays seed + k)")
    args = ap.parse_args(argv)
    if args.games < 2 * args.players:
        ap.error(
            f"--games must be at least {2 * args.players} for {args.players} players: games come in "
            f"duplicate groups of {args.players} (one per seating) and an interval needs two groups"
        )
    groups = args.games // args.players
    if not 0 <= args.seed <= SEED_LIMIT - groups:
        ap.error("--seed must be 0 or more and the groups' seeds below 2**63 (a match seed's limit)")
    try:
        candidate, baseline = factory(args.candidate), factory(args.baseline)
    except ValueError as exc:
        ap.error(str(exc))
    if groups * args.players != args.games:
        print(
            f"note: --games {args.games} is not a multiple of {args.players} (one game per seating): "
            f"playing {groups * args.players} games in {groups} duplicate groups",
            file=sys.stderr,
        )
    start = time.monotonic()
    s = duel(candidate, baseline, args.players, groups, args.seed, names=(args.candidate, args.baseline))
    print(
        f"{s.candidate} vs {s.baseline}, {s.players}p, {s.games} games: share {s.share.estimate:.3f} "
        f"Elo {s.elo.estimate:+.0f} [{s.elo.low:+.0f}, {s.elo.high:+.0f}] score diff "
        f"{s.score_difference.estimate:+.2f} [{s.score_difference.low:+.2f}, {s.score_difference.high:+.2f}] "
        f"({time.monotonic() - start:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    from arena.strength.entry import run_tool

    run_tool(main)
