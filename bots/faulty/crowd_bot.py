#!/usr/bin/env python3
"""Starves its opponent of CPU: forks CROWD (default 40) children, each in a session of its own
(so the kernel's per-session scheduling groups do not pool them), that spin while it is NOT this
bot's turn and rest during its own decisions, so none of it is charged to its clock even on
the CPU clock.  Plays random legal actions.

The arena must keep its opponent's share of the CPU: every bot is a scheduling group of its own
(a cgroup), however many processes it has (tests/adversarial/test_cpu_share.py).
"""

import mmap
import os
import time

from arena.sdk import Bot, run

SPIN = mmap.mmap(-1, 1)  # shared with the children: 1 = spin


def _spinner() -> None:
    os.setsid()
    while os.getppid() != 1:
        if SPIN[0] == 1:
            for _ in range(2000):
                pass
        else:
            time.sleep(0.0005)
    os._exit(0)


for _ in range(int(os.environ.get("CROWD", "40"))):
    try:
        if os.fork() == 0:
            _spinner()
    except OSError:  # the sandbox's process limit: spin with what there is
        break


class CrowdBot(Bot):
    name = "crowd"

    def setup(self, welcome):
        SPIN[0] = 1

    def choose(self, state, legal):
        SPIN[0] = 0
        action = self.rng.choice(legal)
        SPIN[0] = 1
        return action

    def on_match_end(self, result):
        SPIN[0] = 0


if __name__ == "__main__":
    run(CrowdBot())
