"""Helpers of the sandbox-and-auth security tests: everything is read from the real system.

Processes are found through ``/proc``: by a unique tag in their environment (``/proc/PID/environ``,
inherited by everything a bot starts, a double-forked ``setsid()`` grandchild too) or by a unique
string on their command line; a match's tokens are recorded by a real :class:`RefereeServer`
subclass that notes the sessions it mints.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

from arena import matchrunner
from arena.referee import RefereeServer
from arena.referee.sessions import BotSession

REPO = Path(__file__).resolve().parents[2]
FAULTY = REPO / "bots" / "faulty"


def all_pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def state(pid: int) -> str | None:
    """The state letter (R, S, Z, ...) of ``pid``, or None when it does not exist."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    return state(pid) not in (None, "Z", "X")


def _read(pid: int, what: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{what}").read_bytes()
    except OSError:
        return b""


def cmdlines() -> dict[int, str]:
    """Every process's command line (arguments joined by spaces), this one's excluded."""
    me = os.getpid()
    return {
        pid: _read(pid, "cmdline").replace(b"\0", b" ").decode("utf-8", "replace")
        for pid in all_pids()
        if pid != me
    }


def with_cmdline(marker: str) -> dict[int, str]:
    """Live processes whose command line contains ``marker``."""
    return {pid: line for pid, line in cmdlines().items() if marker in line and is_alive(pid)}


def with_environ(tag: str) -> set[int]:
    """Live processes whose environment contains ``tag`` (this one's excluded)."""
    me = os.getpid()
    wanted = tag.encode()
    return {pid for pid in all_pids() if pid != me and wanted in _read(pid, "environ") and is_alive(pid)}


def wait_until_none(find: Any, timeout: float) -> set[int]:
    """Poll ``find()`` (a set or dict of pids) until it is empty; what is left after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left = set(find())
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill(pids: Iterable[int]) -> None:
    """SIGKILL (cleanup after a failed check, so one failure does not leak into other tests)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class RecordingServer(RefereeServer):
    """A real referee that remembers the sessions it mints (to know the match's tokens)."""

    minted: ClassVar[list[BotSession]] = []

    def session(self, name: str, *, persistent: bool = False) -> BotSession:
        made = super().session(name, persistent=persistent)
        RecordingServer.minted.append(made)
        return made


@contextlib.contextmanager
def recording_tokens() -> Iterator[list[BotSession]]:
    """``play_local_match`` builds a :class:`RecordingServer`; yields the sessions it mints."""
    RecordingServer.minted = []
    with mock.patch.object(matchrunner, "RefereeServer", RecordingServer):
        yield RecordingServer.minted
