#!/usr/bin/env python3
"""An honest bot that thinks: it spends THINK_CPU (default 0.2) seconds of its own CPU on each
of its first THINK_DECISIONS (default 12) decisions, then answers at once; random legal actions.
The opponent of crowd_bot.py in tests/adversarial/test_cpu_share.py."""

import os
import time

from arena.sdk import Bot, run

CPU = float(os.environ.get("THINK_CPU", "0.2"))
DECISIONS = int(os.environ.get("THINK_DECISIONS", "12"))


class ThinkerBot(Bot):
    name = "thinker"

    def __init__(self):
        super().__init__()
        self.decisions = 0

    def choose(self, state, legal):
        self.decisions += 1
        if self.decisions <= DECISIONS:
            start = time.process_time()
            while time.process_time() - start < CPU:
                pass
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(ThinkerBot())
