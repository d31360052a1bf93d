#!/usr/bin/env python3
"""A bot that plays the engine's greedy policy: best colour, best lounger, no lookahead."""

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run


class GreedyBot(Bot):
    name = "greedy"

    def __init__(self) -> None:
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        return self.policy.choose(state)


if __name__ == "__main__":
    run(GreedyBot())
