"""Running the real ``arena`` command in a subprocess, with its own data directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).with_name("arena")


@dataclass
class Run:
    """What a finished ``arena`` process left: exit status and both streams."""

    returncode: int
    stdout: str
    stderr: str


def arena_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for an ``arena`` run whose data lives in ``home``."""
    env = {**os.environ, "ARENA_HOME": str(home), "COLUMNS": "120", **extra}
    env.pop("ARENA_DATABASE_URL", None)
    return env


def run_arena(args: Sequence[str], home: Path, *, timeout: float = 120, **extra: str) -> Run:
    """Run ``arena ARGS`` to the end in ``home`` (also its working directory)."""
    proc = subprocess.run(
        [str(ARENA), *args],
        cwd=home,
        env=arena_env(home, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def interrupt_arena(
    args: Sequence[str],
    home: Path,
    delays: Sequence[float],
    *,
    timeout: float = 60,
    sig: signal.Signals = signal.SIGINT,
    after_line: str | None = None,
) -> Run:
    """Start ``arena ARGS`` in its own process group and send ``sig`` (SIGINT, as a terminal's
    Ctrl-C does) to the whole group after each of ``delays`` seconds, counted from the start or,
    with ``after_line``, from the first output line that contains it (stdout and stderr are then
    read together, as ``stdout``); wait for the end."""
    proc = subprocess.Popen(
        [str(ARENA), *args],
        cwd=home,
        env=arena_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if after_line is not None else subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen = ""
    try:
        if after_line is not None:
            assert proc.stdout is not None
            for line in proc.stdout:
                seen += line
                if after_line in line:
                    break
        start = time.monotonic()
        for delay in delays:
            time.sleep(max(0.0, start + delay - time.monotonic()))
            if proc.poll() is None:
                os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return Run(proc.returncode, seen + out, err or "")
