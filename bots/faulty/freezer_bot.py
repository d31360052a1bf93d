#!/usr/bin/env python3
"""Answers its FAULT_AT-th decision, then freezes itself (SIGSTOP) while it is not its turn."""

import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at

from arena.sdk import Bot, run


class FreezerBot(Bot):
    name = "freezer"
    count = 0

    def choose(self, state, legal):
        self.count += 1
        if self.count == fault_at():
            # Freeze the whole process a moment after this answer has gone out.
            threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGSTOP)).start()
        return legal[0]


if __name__ == "__main__":
    run(FreezerBot())
