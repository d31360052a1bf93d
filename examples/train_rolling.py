#!/usr/bin/env python3
"""Train the rolling agent (rolling_agent.py) in the PettingZoo environment, then measure it.

    .venv/bin/python examples/train_rolling.py --seconds 120 --out examples/rolling_agent.json
    arena evaluate examples/rolling_bot.py --vs random --games 40

Training: 2-player games of arena.envs.pettingzoo against a uniformly random opponent (the
learner changes seat every game); after each of its turns the agent adds the turn's outcome
(the margin its action gained, minus half a point per chip spent) to the keys of the rolling
choices it made (Monte Carlo averages, optimistic about untried keys, 10% random choices).
Measuring: games on fresh seeds against random, the trained agent and the untrained one (which
always stops rolling at once) on the same dice, reporting the mean final margin and wins.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rolling_agent import CHIP_COST, RollingAgent, margin

from arena.engine import Phase, apply
from arena.envs.actions import ACTIONS
from arena.envs.observation import decode
from arena.envs.pettingzoo import CoolAmPoolEnv


def random_index(mask: np.ndarray, rng: random.Random) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play(
    env: CoolAmPoolEnv, agent: RollingAgent, learner: str, seed: int, rng: random.Random, *, learn: bool
) -> float:
    """One game; returns the learner's final reward (margin mode)."""
    env.reset(seed=seed)
    pending: list[str] = []
    final = 0.0
    for name in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            if name == learner:
                final = float(reward)
            env.step(None)
            continue
        o, m = obs["observation"], obs["action_mask"]
        if name != learner:
            env.step(random_index(m, rng))
            continue
        index, key = agent.decide(o, m, explore=rng if learn else None)
        if learn:
            if key is not None:
                pending.append(key)
            s = decode(o)
            if s.phase == Phase.ACTION:
                gain = margin(apply(s, ACTIONS[index])) - margin(s)
                chips = sum(1 for k in pending if k.startswith("chip:"))
                agent.update(pending, gain - CHIP_COST * chips)
                pending = []
        env.step(index)
    return final


def train(seconds: float, seed: int = 0, players: int = 2) -> tuple[RollingAgent, int]:
    """Train for about ``seconds``; returns the agent and the number of games played."""
    env = CoolAmPoolEnv(players, reward="margin")
    agent = RollingAgent()
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    games = 0
    while time.monotonic() < deadline:
        learner = env.possible_agents[games % players]
        play(env, agent, learner, 1_000_000 + seed * 100_000 + games, rng, learn=True)
        games += 1
    return agent, games


def measure(agent: RollingAgent, games: int, players: int = 2) -> tuple[float, float]:
    """Mean final margin and share of games won (ties half) against random on seeds 0.."""
    env = CoolAmPoolEnv(players, reward="margin")
    margins, wins = [], 0.0
    for g in range(games):
        learner = env.possible_agents[g % players]
        r = play(env, agent, learner, g, random.Random(g), learn=False)
        margins.append(r)
        wins += 1.0 if r > 0 else 0.5 if r == 0 else 0.0
    return sum(margins) / games, wins / games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="training time (default 120)")
    parser.add_argument("--eval-games", type=int, default=40, help="games to measure (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("rolling_agent.json"))
    args = parser.parse_args(argv)
    start = time.monotonic()
    agent, games = train(args.seconds, args.seed)
    print(f"trained for {time.monotonic() - start:.0f}s: {games} games, {len(agent.table)} keys")
    agent.save(args.out)
    print(f"wrote {args.out}")
    if args.eval_games:
        for label, who in (("untrained (always stop)", RollingAgent()), ("trained", agent)):
            mean, won = measure(who, args.eval_games)
            print(f"vs random, {args.eval_games} games: {label:24} mean margin {mean:+.1f}, won {won:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
