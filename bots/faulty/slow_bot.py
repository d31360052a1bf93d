#!/usr/bin/env python3
"""Sleeps far past the deadline at its FAULT_AT-th decision."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at

from arena.sdk import Bot, run


class SlowBot(Bot):
    name = "slow"
    count = 0

    def choose(self, state, legal):
        self.count += 1
        if self.count == fault_at():
            time.sleep(float(os.environ.get("SLEEP", "30")))
        return legal[0]


if __name__ == "__main__":
    run(SlowBot())
