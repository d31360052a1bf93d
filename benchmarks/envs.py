"""Environment speed: decisions/s of the PettingZoo and OpenSpiel wrappers against the bare engine.

Usage: .venv/bin/python benchmarks/envs.py [--seconds S] [--rounds R] [--quick]

Every loop plays the same random 4-player games (the same seeds, the same random choices:
increasing action indices are the engine's order of legal actions, so "the k-th legal action" is
the same move everywhere), throws from the §5 dice stream, and counts **decisions** (a throw is
part of the decision that leads to it):

* ``engine``: ``legal_actions`` / ``apply`` / ``apply_throw`` on immutable states (the baseline);
* ``episode``: :class:`arena.envs.episode.Episode` driven by action indices (no observation);
* ``pettingzoo``: the AEC environment as an agent uses it: ``last()`` (the observation vector and
  the mask of the agent to act), a choice from the mask (``np.flatnonzero``), ``step(index)``;
* ``openspiel``: the ``python_cool_am_pool`` state: ``legal_actions()``, ``apply_action``, chance
  outcomes from the dice stream.

The observation vector comes from the compiled encoder (``arena/envs/_obsfast.c``) when it is
built, as in a normal install; ``pz-python`` replays the games with the pure-Python encoder.

A second table replays the same games with the choices given (no agent at all): ``engine``
(``legal_actions`` + ``apply`` + throws) against ``pettingzoo`` (``last()`` + ``step``): the pure
wrapper cost.  Cost = the engine's rate / the wrapper's (target for PettingZoo: < 2x).  CPU time
of this process (pinned to one core), measured in alternating rounds; medians reported.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from arena.engine import DiceStream, apply, apply_throw, legal_actions, new_game

PLAYERS = 4


def engine_loop(seed: int) -> int:
    rng = random.Random(seed)
    dice = DiceStream(seed)
    s = new_game(PLAYERS)
    n = 0
    while not s.is_over:
        legal = legal_actions(s)
        s = apply(s, legal[rng.randrange(len(legal))])
        while s.is_chance:
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
        n += 1
    return n


def episode_loop(seed: int) -> int:
    from arena.envs.actions import legal_indices
    from arena.envs.episode import Episode

    rng = random.Random(seed)
    e = Episode(PLAYERS, seed)
    n = 0
    while not e.over:
        legal = legal_indices(e.state)
        e.step(legal[rng.randrange(len(legal))])
        n += 1
    return n


_ENV: Any = None


def pettingzoo_loop(seed: int) -> int:
    global _ENV
    from arena.envs.pettingzoo import CoolAmPoolEnv

    if _ENV is None:
        _ENV = CoolAmPoolEnv(PLAYERS)
    env = _ENV
    rng = random.Random(seed)
    env.reset(seed=seed)
    n = 0
    while env.agents:
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
        n += 1
    return n


def openspiel_loop(seed: int) -> int:
    from arena.envs.openspiel import load

    rng = random.Random(seed)
    state = load(PLAYERS).new_initial_state()
    n = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.stream_outcome(seed))
            continue
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        n += 1
    return n


_CHOICES: dict[int, list[int]] = {}


def _choices(seed: int) -> list[int]:
    """The action indices of the random game of ``seed`` (computed once, outside the timing)."""
    if seed not in _CHOICES:
        from arena.envs.actions import INDEX

        rng = random.Random(seed)
        dice = DiceStream(seed)
        s = new_game(PLAYERS)
        out = []
        while not s.is_over:
            legal = legal_actions(s)
            a = legal[rng.randrange(len(legal))]
            out.append(INDEX[a])
            s = apply(s, a)
            while s.is_chance:
                s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
        _CHOICES[seed] = out
    return _CHOICES[seed]


def engine_replay(seed: int) -> int:
    from arena.envs.actions import ACTIONS

    dice = DiceStream(seed)
    s = new_game(PLAYERS)
    for index in _choices(seed):
        legal_actions(s)
        s = apply(s, ACTIONS[index])
        while s.is_chance:
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
    return len(_choices(seed))


def pettingzoo_replay(seed: int) -> int:
    global _ENV
    from arena.envs.pettingzoo import CoolAmPoolEnv

    if _ENV is None:
        _ENV = CoolAmPoolEnv(PLAYERS)
    env = _ENV
    env.reset(seed=seed)
    last, step = env.last, env.step
    for index in _choices(seed):
        last()
        step(index)
    return len(_choices(seed))


def pettingzoo_python_replay(seed: int) -> int:
    """``pettingzoo_replay`` with the pure-Python observation encoder (the definition) in place
    of the compiled one: what the wrapper costs where the C encoder could not be built."""
    import arena.envs.pettingzoo as pz
    from arena.envs.observation import encode_python

    compiled, pz.encode = pz.encode, encode_python
    try:
        return pettingzoo_replay(seed)
    finally:
        pz.encode = compiled


REPLAYS: dict[str, Callable[[int], int]] = {
    "engine": engine_replay,
    "pettingzoo": pettingzoo_replay,
    "pz-python": pettingzoo_python_replay,
}

LOOPS: dict[str, Callable[[int], int]] = {
    "engine": engine_loop,
    "episode": episode_loop,
    "pettingzoo": pettingzoo_loop,
    "openspiel": openspiel_loop,
}


def measure(loop: Callable[[int], int], seconds: float) -> tuple[int, float]:
    """Whole games with seeds 0, 1, ... for about ``seconds`` of CPU time: (decisions, CPU s)."""
    start = time.process_time()
    decisions, seed = 0, 0
    while seed == 0 or time.process_time() - start < seconds:
        decisions += loop(seed)
        seed += 1
    return decisions, time.process_time() - start


def _table(
    loops: dict[str, Callable[[int], int]], seconds: float, rounds: int, out: Callable[[str], Any]
) -> dict[str, float]:
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(rounds):
        for name, loop in loops.items():
            decisions, dt = measure(loop, seconds)
            rates[name].append(decisions / dt)
    med = {name: statistics.median(r) for name, r in rates.items()}
    out(f"{'loop':<12} {'decisions/s (median)':>21} {'min':>10} {'cost vs engine':>15}")
    for name in loops:
        out(f"{name:<12} {med[name]:>21.0f} {min(rates[name]):>10.0f} {med['engine'] / med[name]:>14.2f}x")
    return med


def run(seconds: float, rounds: int, out: Callable[[str], Any] = print) -> dict[str, float]:
    """Print both tables; return the median decisions/s of every loop and the cost factors
    (``pettingzoo_cost`` with a random agent, ``wrapper_cost`` with the choices given,
    ``openspiel_cost``)."""
    for loop in (*LOOPS.values(), *REPLAYS.values()):  # imports and warm-up out of the way
        loop(0)
    assert len({loop(1) for loop in (*LOOPS.values(), *REPLAYS.values())}) == 1, "not the same game"
    from arena.envs.observation import ENCODER

    out(f"4-player random games, {rounds} rounds of {seconds:g} s CPU each; load {os.getloadavg()[0]:.2f}")
    out(f"observation encoder: {ENCODER} (pz-python: the pure-Python one, for comparison)")
    out("an agent included: a random choice from the legal tuple (engine) or from the mask with")
    out("numpy.flatnonzero (environments), so the agent's own work is in these figures:")
    med = _table(LOOPS, seconds, rounds, out)
    out("the wrapper alone (what the < 2x target is about): the same games with the choices given,")
    out("last() + step() against legal_actions + apply:")
    replay = _table(REPLAYS, seconds, rounds, out)
    result = dict(med)
    result["pettingzoo_cost"] = med["engine"] / med["pettingzoo"]
    result["openspiel_cost"] = med["engine"] / med["openspiel"]
    result["wrapper_cost"] = replay["engine"] / replay["pettingzoo"]
    result["wrapper_cost_python_encoder"] = replay["engine"] / replay["pz-python"]
    out(f"load after: {os.getloadavg()[0]:.2f}")
    return result


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU time per measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per loop (default 5)")
    parser.add_argument("--quick", action="store_true", help="0.3 s x 3 rounds (for tests)")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    if args.quick:
        return run(0.3, 3)
    return run(args.seconds, args.rounds)


if __name__ == "__main__":
    main()
