#!/usr/bin/env python3
"""Exits with status 3 in the middle of the game (at its FAULT_AT-th decision)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at

from arena.sdk import Bot, run


class QuitterBot(Bot):
    name = "quitter"
    count = 0

    def choose(self, state, legal):
        self.count += 1
        if self.count == fault_at():
            print("quitter: leaving the pool now", file=sys.stderr, flush=True)
            os._exit(3)
        return legal[0]


if __name__ == "__main__":
    run(QuitterBot())
