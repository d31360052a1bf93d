"""Helpers of the adversarial tests: hostile bots against the real sandbox, referee and store.

Every check here reads the real system: ``/proc`` for processes that outlived their match, the
cgroup file system for the bots' cgroups, the bots' own stderr logs for what their attacks did.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from arena.sandbox import cgroups as cgroups_module
from arena.sandbox import launcher as launcher_module
from arena.sandbox.cgroups import BotCgroup

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "bots"
FAULTY = BOTS / "faulty"

# One line per hostile attempt, written by bots/faulty/_common.attempt (and the escaper).
ATTEMPT_RE = re.compile(r"^(?P<bot>[a-z]+): (?P<label>.+?): (?P<verdict>BLOCKED|SUCCEEDED)\b(?P<rest>.*)$")


# ---------------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of ``pid`` from /proc, or None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[2])


def all_pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def child_pids(*, include_zombies: bool = True) -> set[int]:
    """Pids whose parent is this (test) process."""
    me = os.getpid()
    out = set()
    for pid in all_pids():
        st = _stat(pid)
        if st is not None and st[1] == me and (include_zombies or st[0] not in ("Z", "X")):
            out.add(pid)
    return out


def children(pid: int) -> list[int]:
    """Live (non-zombie) children of ``pid``."""
    out = []
    for child in all_pids():
        st = _stat(child)
        if st is not None and st[1] == pid and st[0] not in ("Z", "X"):
            out.append(child)
    return out


def cmdline(pid: int) -> str:
    """The command line of ``pid`` (empty for a zombie or a process that is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def processes_with(markers: Iterable[str]) -> dict[int, str]:
    """Live processes (zombies have an empty cmdline) whose command line or environment contains
    any marker (a bot's token is only in its environment, inherited by all it starts)."""
    wanted = [m for m in markers if m]
    out = {}
    me = os.getpid()
    for pid in all_pids():
        if pid == me:
            continue
        try:
            cmdline = (
                Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
        except OSError:
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace") if cmdline else ""
        except OSError:  # another user's process
            environ = ""
        if any(m in cmdline or m in environ for m in wanted):
            out[pid] = cmdline
    return out


def wait_gone(markers: Iterable[str], timeout: float = 5.0) -> dict[int, str]:
    """Wait until no process mentions any marker; return the ones left after ``timeout``."""
    markers = list(markers)
    deadline = time.monotonic() + timeout
    while True:
        left = processes_with(markers)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_all(pids: Iterable[int]) -> None:
    """SIGKILL (cleanup after a failed check, so one failure does not leak into other tests)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def reap_children() -> None:
    """Reap whatever this (subreaper) process adopted and has died since."""
    for pid in child_pids():
        st = _stat(pid)
        if st is not None and st[0] in ("Z", "X"):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


# ---------------------------------------------------------------------- cgroups


@dataclass
class CgroupRecorder:
    """Records every bot cgroup the launcher creates in this process (to check their removal)."""

    created: list[BotCgroup] = field(default_factory=list)
    unavailable: int = 0

    @contextlib.contextmanager
    def recording(self) -> Iterator[CgroupRecorder]:
        original = BotCgroup.create.__func__  # type: ignore[attr-defined]

        def create(cls: type[BotCgroup], memory_mb: int, processes: int) -> BotCgroup | None:
            group = original(cls, memory_mb, processes)
            if group is None:
                self.unavailable += 1
            else:
                self.created.append(group)
            return group

        with mock.patch.object(launcher_module.BotCgroup, "create", classmethod(create)):
            yield self

    def left_over(self) -> list[Path]:
        """Cgroup directories of recorded bots that still exist."""
        return [d for g in self.created for d in g.dirs.values() if d.exists()]


def cgroup_dirs_made_by(pids: Iterable[int]) -> list[Path]:
    """Bot cgroup directories (below this process's cgroups) made by any of ``pids``."""
    out: list[Path] = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            if c not in ("pids", "memory", "cpuacct", "cpu", ""):
                continue
            parent = (
                cgroups_module.ROOT / c / path.lstrip("/") if c else cgroups_module.ROOT / path.lstrip("/")
            )
            for pid in pids:
                with contextlib.suppress(OSError):
                    out += parent.glob(f"{cgroups_module.PREFIX}{pid}-*")
    return out


@functools.cache
def cgroups_available() -> str | None:
    """None when per-bot cgroups can be created here, else why not."""
    group = BotCgroup.create(64, 8)
    if group is None:
        return "cannot create per-bot cgroups here (no writable pids/memory/cpuacct or cgroup v2)"
    controllers = set(group.dirs)
    group.remove()
    if not group.v2 and not {"pids", "memory", "cpuacct"} <= controllers:
        return f"only the cgroup controllers {sorted(controllers)} are available"
    return None


# ---------------------------------------------------------------------- hostile bots' logs


@dataclass(frozen=True)
class Attempt:
    label: str
    blocked: bool
    rest: str


def attempts(log: str, bot: str) -> list[Attempt]:
    """The hostile attempts ``bot`` logged, in order."""
    out = []
    for line in log.splitlines():
        m = ATTEMPT_RE.match(line)
        if m and m["bot"] == bot:
            out.append(Attempt(m["label"], m["verdict"] == "BLOCKED", m["rest"].strip()))
    return out
