"""Small CLI truths: a bad --termination is refused, a tournament's progress shows its total from
the start, and after Ctrl-C ``tournament show`` says the tournament is interrupted, not running."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .helpers import ARENA, ROOT, arena_env, run_arena
from .test_interrupt import SLEEPY_BOT


def test_unknown_termination_is_refused(home: Path) -> None:
    bad = run_arena(["replays", "list", "--termination", "banana"], home)
    assert bad.returncode == 2, bad.stderr
    assert "unknown termination 'banana'" in bad.stderr and "crashed" in bad.stderr, bad.stderr
    good = run_arena(["replays", "list", "--termination", "crashed"], home)
    assert "unknown termination" not in good.stderr, good.stderr  # (no database here yet: exit 1)


def _line_with(proc: subprocess.Popen[str], text: str, timeout: float) -> list[str]:
    """stderr lines of ``proc`` up to the first containing ``text`` (fails after ``timeout``)."""
    assert proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"no line with {text!r} within {timeout} s: {seen}")


def test_tournament_progress_and_show_tell_the_truth(home: Path) -> None:
    (home / "sleepy_bot.py").write_text(SLEEPY_BOT)
    for name, path in (("sleepy", home / "sleepy_bot.py"), ("rnd", ROOT / "bots" / "random_bot.py")):
        added = run_arena(["bots", "add", name, str(path), "--no-check"], home)
        assert added.returncode == 0, added.stderr
    proc = subprocess.Popen(
        [str(ARENA), "tournament", "run", "sleepy", "rnd", "--games", "2", "--jobs", "1", "--no-sandbox"],
        cwd=home, env=arena_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        # a match of the sleepy bot takes half a minute: the total is shown long before it ends
        lines = _line_with(proc, "0/4 matches done", timeout=60)
        assert not any("1/4" in line for line in lines), lines
        running = run_arena(["tournament", "show", "1"], home)
        assert "status running, coordinated by pid" in running.stdout, running.stdout
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    shown = run_arena(["tournament", "show", "1"], home)
    assert shown.returncode == 0, shown.stderr
    assert "status interrupted: no coordinator is running it, 4 matches left;" in shown.stdout, shown.stdout
    assert "resume with 'arena tournament resume 1'" in shown.stdout
    assert "status running" not in shown.stdout


def test_demo_prints_match_counts_in_words(home: Path) -> None:
    demo = subprocess.run(
        [sys.executable, "-m", "arena.demo", "--games", "1", "--move-time", "0.05", "--jobs", "2"],
        cwd=home, env=arena_env(home), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stdout + demo.stderr
    line = next(line for line in demo.stdout.splitlines() if line.startswith("Matches:"))
    assert re.fullmatch(r"Matches: \d+ finished(, \d+ \w+)*\. Database: \S+", line), line
    assert "{" not in line and "'" not in line
