"""The guard of an unsandboxed bot: a tiny parent process that lets nothing of the bot outlive it.

Run as ``python -I -S guard.py --parent PID [--cgroup-procs FILE]... -- COMMAND [ARG]...`` (the
launcher does that for every bot started without the sandbox; standard library only, so it starts
in a few milliseconds).  It

* joins the bot's cgroup(s) first, when given (the bot and all it starts inherit them);
* dies with the arena: its parent-death signal is :data:`KILL_SIGNAL`, so when the process that
  launched it dies (``kill -9`` too) it kills the bot's whole tree first;
* is the bot's *child subreaper* (``PR_SET_CHILD_SUBREAPER``): whatever the bot starts and
  orphans, even a double-forked ``setsid()`` grandchild that ignores SIGTERM and SIGHUP, is
  re-parented to the guard instead of to init, so every descendant of the bot stays below it;
* forks and execs ``COMMAND`` (in the guard's process group, with the parent-death signal SIGKILL,
  so the bot dies if its guard is killed);
* when the bot exits, or on :data:`KILL_SIGNAL`, SIGKILLs and reaps every descendant it has, then
  exits the way the bot did (same status, or killed by the same signal).

SIGTERM, SIGHUP and SIGINT are ignored by the guard itself: sent to the process group they reach
the bot, and the guard follows it.  A bot that cannot be executed makes the guard print
``arena guard: cannot start ...`` on stderr and exit with status 127.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time
from collections.abc import Sequence

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
KILL_SIGNAL = signal.SIGUSR1  # "kill the bot's whole tree now"; also the guard's parent-death signal
EXEC_FAILED = 127
CGROUP_FAILED = 97
USAGE = 2
IGNORED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class _KillNow(Exception):
    """Raised in the guard's main loop by :data:`KILL_SIGNAL`."""


def _prctl(option: int, value: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(option, value, 0, 0, 0) == 0)


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (by parent pid, zombies included), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            out.append(pid)
            todo.append(pid)
    return out


def kill_tree(deadline: float = 10.0) -> dict[int, int]:
    """SIGKILL every descendant of this process and reap the children (orphans included), until
    none is left (or ``deadline`` seconds passed); returns the wait statuses reaped, by pid."""
    me = os.getpid()
    reaped: dict[int, int] = {}
    end = time.monotonic() + deadline
    while True:
        pids = descendants(me)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return reaped  # no child left: nothing below us at all
            if pid == 0:
                break
            reaped[pid] = status
        if time.monotonic() > end:
            return reaped
        time.sleep(0.005)


def _exit_like(status: int | None) -> None:
    """Exit the way the bot did: the same exit status, or killed by the same signal."""
    if status is not None and os.WIFEXITED(status):
        os._exit(os.WEXITSTATUS(status))
    sig = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else signal.SIGKILL
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of the guard
    with contextlib.suppress(OSError, ValueError):  # (SIGKILL and SIGSTOP have no handler to reset)
        signal.signal(sig, signal.SIG_DFL)
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
    with contextlib.suppress(OSError):
        os.kill(os.getpid(), sig)
    os._exit(128 + int(sig))  # a signal whose default action is not to terminate


def _on_kill(signum: int, frame: object) -> None:
    signal.signal(KILL_SIGNAL, signal.SIG_IGN)  # one is enough
    raise _KillNow


def _start(command: Sequence[str]) -> int:
    """Fork and exec the bot; returns its pid."""
    guard = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:
        for sig in (*IGNORED, KILL_SIGNAL):
            signal.signal(sig, signal.SIG_DFL)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the bot dies if its guard is killed
        if os.getppid() != guard:
            os._exit(EXEC_FAILED)
        os.execvp(command[0], list(command))
    except OSError as exc:
        os.write(2, f"arena guard: cannot start {command[0]}: {exc.strerror}\n".encode())
    finally:
        os._exit(EXEC_FAILED)


def _parse(argv: Sequence[str]) -> tuple[int, list[str], list[str]]:
    """(parent pid, cgroup.procs files, command) from the guard's arguments."""
    if "--" not in argv:
        raise ValueError("no '--' before the bot's command")
    split = list(argv).index("--")
    options, command = list(argv[:split]), list(argv[split + 1 :])
    if not command:
        raise ValueError("no command after '--'")
    parent, procs = 0, []
    while options:
        flag = options.pop(0)
        if not options:
            raise ValueError(f"{flag} needs a value")
        value = options.pop(0)
        if flag == "--parent":
            parent = int(value)
        elif flag == "--cgroup-procs":
            procs.append(value)
        else:
            raise ValueError(f"unknown option {flag}")
    return parent, procs, command


def main(argv: Sequence[str]) -> None:
    """Guard one bot (see the module docstring); never returns."""
    try:
        parent, procs, command = _parse(argv)
    except ValueError as exc:
        os.write(2, f"arena guard: {exc}\n".encode())
        os._exit(USAGE)
    for path in procs:  # join the bot's cgroups before anything of the bot exists
        try:
            with open(path, "w") as fh:
                fh.write(str(os.getpid()))
        except OSError as exc:
            os.write(2, f"arena guard: cannot join the cgroup {path}: {exc.strerror}\n".encode())
            os._exit(CGROUP_FAILED)
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(KILL_SIGNAL, _on_kill)
    _prctl(PR_SET_PDEATHSIG, KILL_SIGNAL)
    if parent and os.getppid() != parent:  # the arena died before the line above took effect
        os._exit(EXEC_FAILED)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    status: int | None = None
    pid = 0
    try:
        pid = _start(command)
        while True:  # orphans of the bot are re-parented to us: reap them as they die
            done, st = os.waitpid(-1, 0)
            if done == pid:
                status = st
                break
    except (_KillNow, ChildProcessError):
        pass
    signal.signal(KILL_SIGNAL, signal.SIG_IGN)
    reaped = kill_tree()  # the bot has ended (or must): nothing of it may outlive it
    if status is None:
        status = reaped.get(pid)
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
