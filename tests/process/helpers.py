"""Helpers for the process-lifecycle tests: a tournament started as an operator would, the
processes of a run (found in /proc), and the uninterrupted reference results."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.helpers import (
    ARENA,
    SAMPLES,
    arena_env,
    match_rows,
    outcome,
    run_cli,
    sample,
    status_counts_plain,
)

from arena.lifecycle import ProcessRef
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.tournament.runner import run_tournament

SEED = 5
GAMES = 3  # 3 tables of 2 x 2 rotations x 3 seeds = 18 matches
TOTAL = 18


def create(url: str, home: Path, sandbox: bool, games: int = GAMES) -> int:
    """Register the sample bots and create the standard tournament (``games`` seeds per table:
    6 matches each) with the CLI; its id."""
    db = Database(url)
    for name in SAMPLES:
        add_bot(db, name, sample(name))
    db.close()
    made = run_cli(
        home, url, "tournament", "create", *SAMPLES, "--tables", "2", "--games", str(games),
        "--seed", str(SEED), "--move-time", "2", "--bank", "20", *([] if sandbox else ["--no-sandbox"]),
    )  # fmt: skip
    assert f"{6 * games} matches" in made.stderr
    return int(made.stdout.strip())


@dataclass
class Started:
    """An ``arena`` command running in a session of its own, its output going to a file."""

    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)


def start(home: Path, url: str, log: Path, *args: str) -> Started:
    """Start ``arena ARGS`` as an operator would, in a session of its own (so that signals sent
    to the test's process group do not reach it and its group is its own)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ARENA), *args],
            env=arena_env(home, url),
            cwd=home,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Started(proc, log)


def wait_for_finished(run: Started, url: str, tid: int, finished: int = 3, timeout: float = 120) -> None:
    """Poll until ``finished`` (not all) matches are finished; the run must still be going."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = status_counts_plain(url, tid)
        if counts.get("finished", 0) >= finished:
            return
        assert run.proc.poll() is None, f"the run ended early ({run.proc.returncode}): {run.output()}"
        time.sleep(0.05)
    raise AssertionError(f"no progress within {timeout} s: {status_counts_plain(url, tid)}")


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


# ---------------------------------------------------------------------- processes


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (zombies included)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            out[int(entry)] = int(fields[1])
    return out


def descendants(root: int) -> list[ProcessRef]:
    """Every live descendant of ``root`` (children, grandchildren, ...), with start times."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            ref = ProcessRef.of(pid)
            if ref.start is not None:
                out.append(ref)
            todo.append(pid)
    return out


def marked(markers: list[str]) -> dict[int, str]:
    """Live processes marked as a run's, this one excepted: a marker is either text their
    command line contains (the data folder: bots run from its artifacts) or, written
    ``NAME=VALUE``, an entry of their environment (``ARENA_RUN=...``)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if not cmdline:  # a zombie
            continue
        text = cmdline.decode("utf-8", "replace")
        if any(m.encode() in environ if m.startswith("ARENA_RUN=") else m in text for m in markers):
            out[int(entry)] = cmdline.replace(b"\0", b" ").decode("utf-8", "replace")[:200]
    return out


def run_markers(home: Path) -> list[str]:
    """What marks a run's processes: the data folder's path in a command line (bots run from
    its artifacts) and ``ARENA_RUN=<marker>`` of each run recorded in its run files."""
    found = [str(home)]
    runs = home / "runs"
    for f in runs.glob("*.json") if runs.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, KeyError):
            found.append(f"ARENA_RUN={json.loads(f.read_text())['marker']}")
    return found


def survivors(refs: list[ProcessRef], markers: list[str], timeout: float) -> dict[int, str]:
    """Wait until none of ``refs`` runs and no process carries a marker; what is left after
    ``timeout`` seconds (pid -> command line)."""
    deadline = time.monotonic() + timeout
    while True:
        left = {r.pid: _cmdline(r.pid) for r in refs if r.alive()} | marked(markers)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")[:200]
    except OSError:
        return "?"


def kill_all(pids: list[int]) -> None:
    """Clean up after a failed test (so it does not leak into the next ones)."""
    import contextlib
    import signal

    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------- the reference results

_reference: dict[tuple[str, bool], list[Any]] = {}


def reference(backend: str, sandbox: bool, new_db_url: Callable[[], str], home: Path) -> list[Any]:
    """The standard tournament's results played uninterrupted in a fresh database (the same
    match ids, from which the random bot seeds itself), once per backend and sandbox setting."""
    key = (backend, sandbox)
    if key not in _reference:
        url = new_db_url()
        tid = create(url, home, sandbox)
        db = Database(url)
        try:
            run_tournament(db, tid, jobs=2)
            rows = match_rows(db, tid)
        finally:
            db.close()
        assert all(r["attempts"] == 1 and r["status"] == "finished" for r in rows)
        _reference[key] = [tid, outcome(rows), [r["id"] for r in rows]]
    return _reference[key]
