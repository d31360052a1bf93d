#!/usr/bin/env python3
"""Spins the CPU forever at its FAULT_AT-th decision (never answers).

Self-contained (one file, no helper imports), so it can also be registered as a tournament bot."""

import os
import sys

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run


class SpinnerBot(Bot):
    name = "spinner"
    count = 0

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        self.count += 1
        if self.count == int(os.environ.get("FAULT_AT", "3")):
            print("spinner: spinning forever", file=sys.stderr, flush=True)
            n = 0
            while True:
                n += 1
        return self.policy.choose(state)


if __name__ == "__main__":
    run(SpinnerBot())
