"""The frozen-bot probe walks only the bot's own process subtree (issue 20): it runs before every
match for every kept-running bot, and reading every process's /proc stat cost ~40 ms a match on a
busy machine.  It finds the same states as the full scan, a stopped grandchild included."""

from __future__ import annotations

import builtins
import os
import signal
import subprocess
import time
from typing import Any

import pytest

from arena.sandbox import launcher

pytestmark = pytest.mark.skipif(not launcher._CHILDREN_FILES, reason="no /proc/PID/task/TID/children")


def test_subtree_walk_finds_what_the_full_scan_finds() -> None:
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & (sleep 60 & wait) & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(launcher._descendant_states(proc.pid)) < 3:  # a sleep, a subshell and its sleep
            assert time.monotonic() < deadline, "the test's processes did not start"
            time.sleep(0.05)
        grandchild = next(c for child in launcher._children(proc.pid) for c in launcher._children(child))
        os.kill(grandchild, signal.SIGSTOP)
        time.sleep(0.2)
        opened: list[str] = []
        real_open = builtins.open

        def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
            opened.append(str(path))
            return real_open(path, *args, **kwargs)

        builtins.open = counting  # type: ignore[assignment]
        try:
            fast = sorted(launcher._descendant_states(proc.pid))
        finally:
            builtins.open = real_open
        launcher._CHILDREN_FILES = False
        try:
            slow = sorted(launcher._descendant_states(proc.pid))
        finally:
            launcher._CHILDREN_FILES = True
        assert fast == slow and "T" in fast, (fast, slow)
        assert len(opened) < 20, f"read {len(opened)} files: not only the subtree"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
