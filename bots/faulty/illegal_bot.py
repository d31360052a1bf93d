#!/usr/bin/env python3
"""Answers a well-formed but illegal action at its FAULT_AT-th decision."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at

from arena.sdk import Bot, run


class IllegalBot(Bot):
    name = "illegal"
    count = 0

    def choose(self, state, legal):
        self.count += 1
        if self.count == fault_at():
            return "take-five five-1" if "pass" not in map(str, legal) else "place green-4a"
        return legal[0]


if __name__ == "__main__":
    run(IllegalBot())
