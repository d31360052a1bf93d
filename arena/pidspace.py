"""Which pid namespace this process is in: a leaf module (it imports nothing of the project), so
the sandbox may use it too.

A pid names a process only within its namespace.  Whatever judges another process dead by its
pid (a sweep of what dead processes left behind: bot cgroups, referee socket folders, a run's
coordinator) must first check that the pid was recorded in its own namespace: an arena in a
container that shares ``/tmp`` or the cgroup tree but not the pids sees every pid of the host as
dead.
"""

from __future__ import annotations

import os


def pid_namespace() -> str:
    """This process's pid namespace: the inode number of ``/proc/self/ns/pid`` ("4026531836"),
    or "" when it cannot be read."""
    try:
        return os.readlink("/proc/self/ns/pid").removeprefix("pid:[").removesuffix("]")
    except OSError:
        return ""


def maker_tag() -> str:
    """``<pid>-n<namespace>-`` for this process (``<pid>-`` when the namespace cannot be read):
    what a name of something left for a later sweep starts with after its prefix, so that the
    sweep can tell whose it is and whether it can judge that pid (:func:`maker_of`)."""
    space = pid_namespace()
    return f"{os.getpid()}-n{space}-" if space else f"{os.getpid()}-"


def maker_of(name: str, prefix: str) -> tuple[int, str] | None:
    """The (pid, pid namespace) in ``name`` = ``prefix`` + ``<pid>-n<namespace>-<random>``
    (namespace "" in older names, ``<pid>-<random>``), or None for any other name.  The random
    part has no dash, so an older name's random part starting with "n" is not read as a
    namespace."""
    if not name.startswith(prefix):
        return None
    parts = name[len(prefix) :].split("-")
    if len(parts) < 2 or not parts[0].isdigit():
        return None
    space = parts[1][1:] if len(parts) >= 3 and parts[1].startswith("n") else ""
    return int(parts[0]), space


def judged_here(space: str) -> bool:
    """Whether a pid recorded in pid namespace ``space`` can be judged from this process: the
    same namespace, or none recorded (an older version's name, judged by its pid as it was)."""
    return space in ("", pid_namespace())
