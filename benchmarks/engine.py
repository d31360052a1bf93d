"""Engine speed: full games/s and engine steps/s (decisions + throws) on one core.

Usage: .venv/bin/python benchmarks/engine.py [--seconds S]

Measures random and greedy play for 2 and 4 players through the public, immutable API
(``apply`` / ``apply_throw`` return new states) with throws from the counter-based dice stream,
exactly as ``arena engine play`` does minus writing the record.  A last line measures the same
random 4-player games with record writing, to show what records cost.
"""

from __future__ import annotations

import argparse
import os
import time

from arena.engine import DiceStream, apply, apply_throw, make_policy, new_game, play_game


def measure(players: int, policy: str, seconds: float) -> tuple[int, int, float]:
    """Play games with seeds 0, 1, 2, ... for about ``seconds``; return games, steps, time."""
    games = steps = 0
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        pols = [make_policy(policy, seed, s) for s in range(players)]
        dice = DiceStream(seed)
        state = new_game(players)
        while not state.is_over:
            if state.is_chance:
                state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
            else:
                state = apply(state, pols[state.seat].choose(state))
            steps += 1
        games += 1
        seed += 1
    return games, steps, time.perf_counter() - start


def measure_recorded(players: int, seconds: float) -> tuple[int, float]:
    games, start, seed = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        play_game(seed, [make_policy("random", seed, s) for s in range(players)])
        games += 1
        seed += 1
    return games, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    print(f"{'players':>7} {'policy':>7} {'games':>6} {'games/s':>9} {'steps/game':>10} {'steps/s':>10}")
    for policy in ("random", "greedy"):
        for players in (2, 4):
            games, steps, dt = measure(players, policy, args.seconds)
            print(
                f"{players:>7} {policy:>7} {games:>6} {games / dt:>9.1f} {steps / games:>10.0f} "
                f"{steps / dt:>10.0f}"
            )
    games, dt = measure_recorded(4, args.seconds)
    print(f"random 4-player games with the game record written: {games / dt:.1f} games/s")


if __name__ == "__main__":
    main()
