#!/usr/bin/env python3
"""Plays greedy, but takes STEADY_S seconds (default 0.02) over every decision: a match lasts
long enough to be watched live in a browser test."""

import os
import time

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run


class SteadyBot(Bot):
    name = "steady"

    def __init__(self) -> None:
        super().__init__()
        self.policy = GreedyPolicy()
        self.wait = float(os.environ.get("STEADY_S", "0.02"))

    def choose(self, state, legal):
        time.sleep(self.wait)
        return self.policy.choose(state)


if __name__ == "__main__":
    run(SteadyBot())
