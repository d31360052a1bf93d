"""The private folder a match host keeps its referee's Unix socket in, and the sweep of folders
that hosts killed without a chance to clean up (SIGKILL, OOM) left behind.

A folder is ``<tmp>/arena-host-<pid>-<random>``: ``<pid>`` is the process that made it.  A host
removes its own folder when it closes (:meth:`arena.hosting.host.MatchHost.close`); a host that
starts removes every folder of this shape that belongs to this user and whose process no longer
exists, so folders of killed workers do not pile up in ``/tmp``.  A folder whose process is alive
(or whose pid was reused by a live process) is never touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "arena-host-"


def make_sock_dir(tmp: str | None = None) -> Path:
    """A new private folder (mode 0700) for this process's referee socket."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=tmp))


def _pid_of(name: str) -> int | None:
    """The pid in a folder name ``arena-host-<pid>-<random>``, or None for any other name."""
    if not name.startswith(PREFIX):
        return None
    pid, sep, _ = name[len(PREFIX) :].partition("-")
    if not sep or not pid.isdigit():
        return None
    return int(pid)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts: signalling it is refused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def sweep_stale(tmp: str | None = None) -> list[Path]:
    """Remove this user's ``arena-host-<pid>-*`` folders whose process is gone; return them.
    Never raises: a folder that cannot be read or removed is left as it is."""
    root = Path(tmp if tmp is not None else tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        pid = _pid_of(entry.name)
        if pid is None or pid == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if _alive(pid):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        if not os.path.exists(entry.path):
            removed.append(Path(entry.path))
    return removed
