#!/usr/bin/env python3
"""Leaves a grandchild behind that tries to outlive the match, then plays greedily.

Before it connects, it double-forks: the child calls setsid() (a new session and process group,
so killing the bot's process group misses it) and forks the grandchild, then exits, so the
grandchild is re-parented.  The grandchild ignores SIGTERM and SIGHUP, tries at once to write the
host path in ARENA_TEST_MARKER (logged on stderr, see _common), sleeps ESCAPER_SLEEP seconds
(default an hour) and then writes the marker again.  After the match it must be dead, and the
marker must never have been written.

Self-contained (one file, no helper imports), so it can also be registered as a tournament bot."""

import os
import signal
import sys
import time

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run


def log(text):
    print(f"escaper: {text}", file=sys.stderr, flush=True)


def write_marker(when):
    marker = os.environ.get("ARENA_TEST_MARKER")
    if not marker:
        return
    try:
        with open(marker, "a") as fh:
            fh.write(f"escaped ({when}), pid {os.getpid()}\n")
    except OSError as exc:
        log(f"marker:{marker} ({when}): BLOCKED {type(exc).__name__}: {exc}")
    else:
        log(f"marker:{marker} ({when}): SUCCEEDED")


def escape():
    """Double fork; returns in the original process only."""
    if os.fork() != 0:
        os.wait()  # the child exits at once
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    log(f"grandchild {os.getpid()} in its own session {os.getsid(0)}, parent {os.getppid()}")
    write_marker("at once")
    time.sleep(float(os.environ.get("ESCAPER_SLEEP", "3600")))
    write_marker("after sleeping")
    os._exit(0)


class EscaperBot(Bot):
    name = "escaper"

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        return self.policy.choose(state)


if __name__ == "__main__":
    escape()
    run(EscaperBot())
