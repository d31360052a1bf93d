"""Engine speed: engine steps/s (decisions + throws) on one core, the engine against its reference.

Usage: .venv/bin/python benchmarks/engine.py [--seconds S] [--rounds N] [--quick]

The figure of issue 20 is the first table: random 4-player play through the public, immutable
API (``apply`` / ``apply_throw`` return new states, ``RandomPolicy`` chooses, the counter-based
dice stream throws), exactly as ``arena engine play`` does minus writing the record, measured for
:mod:`arena.engine` and for :mod:`arena.engine.reference` (the frozen, unoptimised engine it was
optimised from) in the same run.  After one untimed warm-up each, the two are measured
alternately, ``--rounds`` times each for ``--seconds`` of CPU time per measurement (the process's
CPU time, not wall time: on a loaded machine waiting for the core is not the engine's time; the
process pins itself to one core), and the table gives the min and median steps/s of each and the
ratio of the medians; both engines play the very same games (same seeds, same choices).  Further
lines: 2-player random play, greedy play, and random 4-player games with the record written.
``--quick`` (for tests) measures 4-player random play only, 0.2 s x 3 rounds.

Where the time went before the optimisation (cProfile of random 4-player play, 464,602 steps,
4.0 s under the profiler; ``py-spy`` agrees): ``apply`` 29 % cumulative (its own body 14 %,
``State._copy`` 11 % of all time across ``apply`` and ``apply_throw``), the dice stream's
``stream_faces`` 19 % (SHA-256 itself is only a third of it: the rest is formatting the counter
and a Python loop over the 32 bytes), ``RandomPolicy.choose`` 22 % (``random.choice`` and its
``_randbelow``), ``apply_throw`` 11 % (a per-face counting loop), ``legal_actions`` 11 %, the
play loop and the ``is_over`` / ``is_chance`` properties (an enum comparison each) the rest.
What was done about it: see ``docs/engine-speed.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import arena.engine as fast
import arena.engine.reference as reference

ENGINES: dict[str, ModuleType] = {"engine": fast, "reference": reference}


def measure(
    engine: ModuleType, players: int, policy: str, seconds: float, first_seed: int = 0
) -> tuple[int, int, float]:
    """Play games with seeds ``first_seed``, +1, ... for about ``seconds`` of CPU time with
    ``engine``'s ``new_game`` / ``apply`` / ``apply_throw`` / ``DiceStream`` / ``make_policy``;
    return games, steps (decisions + throws) and the CPU time taken.

    CPU time of this process, not wall time: on a loaded machine the time the process waits for
    the core is not the engine's (the benchmark pins itself to one core)."""
    new_game, apply, apply_throw = engine.new_game, engine.apply, engine.apply_throw
    dice_stream, policy_for = engine.DiceStream, engine.make_policy
    games = steps = 0
    start = time.process_time()
    seed = first_seed
    while time.process_time() - start < seconds:
        pols = [policy_for(policy, seed, s) for s in range(players)]
        dice = dice_stream(seed)
        state = new_game(players)
        while not state.is_over:
            if state.is_chance:
                state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
            else:
                state = apply(state, pols[state.seat].choose(state))
            steps += 1
        games += 1
        seed += 1
    return games, steps, time.process_time() - start


@dataclass
class Figure:
    """Steps/s of every measurement of one engine in one configuration."""

    rates: list[float]

    @property
    def low(self) -> float:
        return min(self.rates)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def compare(players: int, policy: str, seconds: float, rounds: int) -> dict[str, Figure]:
    """Measure both engines alternately ``rounds`` times (the same games each time), after one
    untimed warm-up of each (which fills the tables both engines build as they meet throws, as
    they are in any process that has played a few hundred games)."""
    out = {name: Figure([]) for name in ENGINES}
    for engine in ENGINES.values():
        measure(engine, players, policy, seconds)
    for _ in range(rounds):
        for name, engine in ENGINES.items():
            _, steps, dt = measure(engine, players, policy, seconds)
            out[name].rates.append(steps / dt)
    return out


def measure_recorded(engine: ModuleType, players: int, seconds: float) -> tuple[int, float]:
    """Random games played with ``engine.play_game``, record written (CPU time)."""
    games, start, seed = 0, time.process_time(), 0
    while time.process_time() - start < seconds:
        engine.play_game(seed, [engine.make_policy("random", seed, s) for s in range(players)])
        games += 1
        seed += 1
    return games, time.process_time() - start


def row(label: str, figures: dict[str, Figure]) -> str:
    e, r = figures["engine"], figures["reference"]
    return (
        f"{label:<18} {e.low:>10.0f} {e.median:>10.0f} {r.low:>10.0f} {r.median:>10.0f} "
        f"{e.median / r.median:>6.2f}x"
    )


def run(
    seconds: float, rounds: int, configs: Sequence[tuple[int, str]], out: Callable[[str], Any] = print
) -> dict[str, Any]:
    """Print the table for ``configs`` and return the figures (for tests)."""
    out(f"load average before: {os.getloadavg()[0]:.2f} (1 min)")
    from arena.engine.state import State, clone

    copy = "python (State._copy)" if clone is State._copy else "compiled (arena/engine/_statecopy.c)"
    out(f"engine's state copy: {copy}; ARENA_PURE_PYTHON=1 measures the pure-Python engine")
    out(f"{'':<18} {'engine steps/s':>21} {'reference steps/s':>21} {'ratio':>7}")
    out(f"{'configuration':<18} {'min':>10} {'median':>10} {'min':>10} {'median':>10} {'(med.)':>7}")
    results: dict[str, Any] = {}
    for players, policy in configs:
        figures = compare(players, policy, seconds, rounds)
        label = f"{players}p {policy}"
        out(row(label, figures))
        results[label] = figures
    out(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per engine and configuration")
    parser.add_argument("--quick", action="store_true", help="0.2 s x 3 rounds, 4-player random only")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    if args.quick:
        run(0.2, 3, [(4, "random")])
        return
    run(args.seconds, args.rounds, [(4, "random"), (2, "random"), (4, "greedy")])
    rates: dict[str, list[float]] = {name: [] for name in ENGINES}
    for _ in range(3):
        for name, engine in ENGINES.items():
            games, dt = measure_recorded(engine, 4, args.seconds)
            rates[name].append(games / dt)
    e, r = statistics.median(rates["engine"]), statistics.median(rates["reference"])
    print(
        f"random 4-player games with the game record written (median of 3): engine {e:.1f} games/s, "
        f"reference {r:.1f} games/s, {e / r:.2f}x"
    )


if __name__ == "__main__":
    main()
