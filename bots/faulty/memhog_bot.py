#!/usr/bin/env python3
"""Allocates (and touches) memory without bound at its FAULT_AT-th decision, logging how much it
holds every 32 MiB, and never answers.

Self-contained (one file, no helper imports), so it can also be registered as a tournament bot."""

import os
import sys

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run

CHUNK = 8 << 20


class MemHogBot(Bot):
    name = "memhog"
    count = 0

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        self.count += 1
        if self.count == int(os.environ.get("FAULT_AT", "3")):
            hoard = []
            while True:
                hoard.append(bytes([len(hoard) % 255 + 1]) * CHUNK)  # filled: every page touched
                held = len(hoard) * CHUNK >> 20
                if held % 32 == 0:
                    print(f"memhog: holding {held} MiB", file=sys.stderr, flush=True)
        return self.policy.choose(state)


if __name__ == "__main__":
    run(MemHogBot())
