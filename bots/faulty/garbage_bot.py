#!/usr/bin/env python3
"""Answers text that is not an action at its FAULT_AT-th decision."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at

from arena.sdk import Bot, run


class GarbageBot(Bot):
    name = "garbage"
    count = 0

    def choose(self, state, legal):
        self.count += 1
        if self.count == fault_at():
            return "jump into the pool!"
        return legal[0]


if __name__ == "__main__":
    run(GarbageBot())
