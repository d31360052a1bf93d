#!/usr/bin/env python3
"""Plays greedy, but waits 1 s of wall-clock time (using next to no CPU) on its first decision of
every match: over a small wall-clock budget, well inside a CPU clock's (its wall limit is
2 x budget + 1 s)."""

import time

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run

WAIT = 1.0


class SleepyBot(Bot):
    name = "sleepy"

    def __init__(self) -> None:
        super().__init__()
        self.policy = GreedyPolicy()
        self.waited = False

    def on_match_start(self, welcome) -> None:
        self.waited = False

    def choose(self, state, legal):
        if not self.waited:
            self.waited = True
            time.sleep(WAIT)
        return self.policy.choose(state)


if __name__ == "__main__":
    run(SleepyBot())
