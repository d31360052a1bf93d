#!/usr/bin/env python3
"""A fork bomb at its FAULT_AT-th decision: it starts a fresh interpreter (no gRPC threads in it,
whose fork handlers would stall the bomb) in which every process forks as fast as it can,
forever, and the bot never answers.  The first process logs on stderr how many forks worked
before the first one failed (the sandbox's process limit).

Self-contained (one file, no helper imports), so it can also be registered as a tournament bot."""

import os
import subprocess
import sys
import time

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run

BOMB = r"""
import os, sys, time
made, first = 0, True
while True:
    try:
        pid = os.fork()
    except OSError as exc:
        if first:
            first = False
            print(f"forkbomb: fork failed after {made} children: {exc}", file=sys.stderr, flush=True)
        time.sleep(0.005)
        continue
    if pid == 0:
        made, first = 0, False  # a child bombs on; only the first process reports
    else:
        made += 1
"""


class ForkBombBot(Bot):
    name = "forkbomb"
    count = 0

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        self.count += 1
        if self.count == int(os.environ.get("FAULT_AT", "3")):
            print("forkbomb: forking forever", file=sys.stderr, flush=True)
            subprocess.Popen([sys.executable, "-c", BOMB])
            while True:
                time.sleep(1)
        return self.policy.choose(state)


if __name__ == "__main__":
    run(ForkBombBot())
