"""Where a policy's points come from: per game, what a candidate does on its turns against the
baseline's seats, on duplicate dice (the groups of :mod:`arena.strength.duel`).

For the candidate and for the mean baseline seat: turns, lounger actions by kind (R19-R23),
passes (forced: PASS was the only legal action; chosen: something else was legal), chips spent
(R12's CHIP), final points (R27), and the forced passes by round.  In-process, no clock; the
same options give the same figures.

    .venv/bin/python -m arena.strength.anatomy search greedy --players 4 --groups 50 --seed 3000
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass, field

from arena.engine import Action, ActionKind, Phase, Policy, State, legal_actions, new_game, play_out, scores
from arena.engine.chance import SEED_LIMIT, DiceStream

from .duel import POLICY_NAMES_HELP, HelpFormatter, PolicyFactory, factory

KINDS = (ActionKind.FLIP, ActionKind.RECLAIM, ActionKind.INVADE, ActionKind.CONQUER, ActionKind.TAKE_FIVE)


@dataclass
class Tally:
    """Counts summed over games (divide by :attr:`games` for a per-game figure)."""

    games: float = 0.0
    counts: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    forced_by_round: defaultdict[int, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, key: str, weight: float) -> None:
        self.counts[key] += weight

    def per_game(self, key: str) -> float:
        return self.counts.get(key, 0.0) / self.games if self.games else 0.0


@dataclass
class Anatomy:
    """The candidate's tally and the mean baseline seat's."""

    candidate: Tally = field(default_factory=Tally)
    baseline: Tally = field(default_factory=Tally)


class _Counting:
    """A policy that tallies each of its decisions (the state it saw, the action it chose)."""

    def __init__(self, policy: Policy, tally: Tally, weight: float) -> None:
        self.policy, self.tally, self.weight = policy, tally, weight

    def choose(self, state: State) -> Action:
        action = self.policy.choose(state)
        tally, w = self.tally, self.weight
        if state.phase == Phase.ACTION:
            tally.add("turns", w)
            if action.kind == ActionKind.PASS:
                forced = len(legal_actions(state)) == 1
                tally.add("pass forced" if forced else "pass chosen", w)
                if forced:
                    tally.forced_by_round[state.round] += w
            else:
                tally.add(action.kind.name.lower(), w)
        elif state.phase == Phase.ROLL and action.kind == ActionKind.CHIP:
            tally.add("chips spent", w)
        return action


def play_and_count(
    candidate: PolicyFactory, baseline: PolicyFactory, players: int, groups: int, seed: int
) -> Anatomy:
    """Play ``groups`` duplicate groups from ``seed`` on (the candidate in every seat once) and
    tally every seat's turns; a baseline seat counts ``1 / (players - 1)`` so that its tally is
    the mean baseline seat's."""
    out = Anatomy()
    share = 1.0 / (players - 1)
    for g in range(groups):
        game_seed = seed + g
        for me in range(players):
            policies: list[Policy] = [
                _Counting(candidate(game_seed, s), out.candidate, 1.0)
                if s == me
                else _Counting(baseline(game_seed, s), out.baseline, share)
                for s in range(players)
            ]
            points = scores(play_out(new_game(players), policies, DiceStream(game_seed)))
            out.candidate.add("points", float(points[me]))
            out.baseline.add("points", sum(p for s, p in enumerate(points) if s != me) * share)
            out.candidate.games += 1
            out.baseline.games += 1
    return out


ROWS = ("turns", *(k.name.lower() for k in KINDS), "pass forced", "pass chosen", "chips spent", "points")


def report(a: Anatomy, names: tuple[str, str]) -> str:
    """The per-game table, then the forced passes by round."""
    width = max(len(r) for r in ROWS)
    lines = [f"{'per game':<{width}}  {names[0]:>12}  {names[1] + ' (mean seat)':>20}"]
    for row in ROWS:
        lines.append(f"{row:<{width}}  {a.candidate.per_game(row):12.2f}  {a.baseline.per_game(row):20.2f}")
    rounds = sorted(set(a.candidate.forced_by_round) | set(a.baseline.forced_by_round))
    if rounds:
        lines.append("forced passes by round (candidate / baseline seat):")
        lines.append(
            "  "
            + "  ".join(
                f"r{r} {a.candidate.forced_by_round.get(r, 0.0) / a.candidate.games:.2f}/"
                f"{a.baseline.forced_by_round.get(r, 0.0) / a.baseline.games:.2f}"
                for r in rounds
            )
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: candidate, baseline, --players, --groups, --seed."""
    ap = argparse.ArgumentParser(
        prog="python -m arena.strength.anatomy",
        formatter_class=HelpFormatter,
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=POLICY_NAMES_HELP,
    )
    ap.add_argument("candidate", help="the policy looked at")
    ap.add_argument("baseline", help="the policy in every other seat")
    ap.add_argument("--players", type=int, default=4, choices=(2, 3, 4), help="players per game")
    ap.add_argument("--groups", type=int, default=50, help="duplicate groups (players games each)")
    ap.add_argument("--seed", type=int, default=3000, help="first group's seed")
    args = ap.parse_args(argv)
    if args.groups < 1:
        ap.error("--groups must be at least 1")
    if not 0 <= args.seed <= SEED_LIMIT - args.groups:
        ap.error("--seed must be 0 or more and the groups' seeds below 2**63 (a match seed's limit)")
    try:
        cand, base = factory(args.candidate), factory(args.baseline)
    except ValueError as exc:
        ap.error(str(exc))
    print(
        report(
            play_and_count(cand, base, args.players, args.groups, args.seed), (args.candidate, args.baseline)
        )
    )
    return 0


if __name__ == "__main__":
    from arena.strength.entry import run_tool

    run_tool(main)
