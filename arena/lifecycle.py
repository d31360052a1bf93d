"""How Pool Arena's long-running processes stop: on a signal, with their parent, and for good.

- :class:`StopSignals` turns SIGINT, SIGTERM and SIGHUP into a *stop request* for a command's
  main thread: at once (:class:`Stopped` is raised there, like Ctrl-C's KeyboardInterrupt), or,
  inside :func:`deferred_stop`, only recorded for a loop that polls :func:`stop_requested` and
  stops at a safe point (the tournament coordinator: stop the bots, record what finished, put the
  rest back in the queue).  The exit status is ``128 + signal`` (130 for Ctrl-C, 143 for
  SIGTERM), what shells and service managers expect.
- :func:`set_parent_death_signal` and :class:`ParentWatch` let a child process (a tournament
  worker) notice that its parent died, whatever killed it, and stop what it started.
- :class:`ProcessRef` names a process by pid *and* start time, so a pid reused by an unrelated
  process is never mistaken for it; :func:`marked_processes` finds processes by an environment
  variable they inherited (how a dead run's leftovers are found).
- :func:`start_resource_tracker` starts multiprocessing's resource tracker so that a SIGHUP to
  the process group leaves it alive to remove a stopped pool's semaphores.
- :func:`run_supervised` runs a child command (``arena worker``'s ``dask worker``) that dies with
  this process and is stopped by it on a signal.

Only the standard library is used here.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from arena.pidspace import pid_namespace

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
AGAIN_HINT = "what was in flight is not recorded; running the command again goes on from what was"
TRACKER_NOTE = (
    "(Python's resource tracker may then report leaked semaphores: it is removing the stopped "
    "worker pool's, nothing is lost)"
)
PR_SET_PDEATHSIG = 1


def signal_name(signum: int) -> str:
    """``SIGTERM``, ``SIGINT``, ... (``signal 42`` for one without a name)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_status(signum: int) -> int:
    """The exit status of a process that stopped because of ``signum``: 128 + its number."""
    return 128 + int(signum)


class Stopped(SystemExit):
    """A stop was requested by a signal.  Its ``code`` is the exit status (128 + the signal), so
    an uncaught one ends the process quietly with the status a shell expects."""

    def __init__(self, signum: int) -> None:
        super().__init__(exit_status(signum))
        self.signum = int(signum)

    @property
    def name(self) -> str:
        """The signal's name (``SIGTERM``)."""
        return signal_name(self.signum)

    def how(self) -> str:
        """``interrupted (Ctrl-C)`` or ``stopped by SIGTERM``: for messages."""
        return "interrupted (Ctrl-C)" if self.signum == signal.SIGINT else f"stopped by {self.name}"


_active: StopSignals | None = None


ECHO_WINDOW = 0.002
"""Seconds within which the same stop signal handled again is the first one's echo, not a second
request: coreutils' ``timeout`` sends its signal to the command and then to the command's whole
process group, so the command gets it twice, microseconds apart ("stopped at once" instead of a
clean stop, now and then).  Far below any two presses of Ctrl-C."""


class StopSignals:
    """While entered (in the main thread), SIGINT, SIGTERM and SIGHUP request a stop.

    Outside :func:`deferred_stop` the first signal raises :class:`Stopped` in the main thread at
    once; inside, it is only recorded (:attr:`signum`) for the code to act on.  A second signal
    while the first is being handled ends the process at once with one line ending in ``hint``
    (:func:`exit_at_once`), as a second Ctrl-C does elsewhere; the same signal again within
    :data:`ECHO_WINDOW` is the first one's echo and ignored.  A signal that was ignored when
    entering (``nohup``, a background job of a non-interactive shell) stays ignored.  The
    previous handlers come back on exit.
    """

    def __init__(self, signals: Sequence[int] = STOP_SIGNALS, hint: str = AGAIN_HINT) -> None:
        self.signals = tuple(signals)
        self.hint = hint  # what the line of a second signal says to do next (:func:`exit_at_once`)
        self.signum: int | None = None
        self._deferred = 0
        self._previous: dict[int, Any] = {}
        self._outer: StopSignals | None = None
        self._hook: Callable[[Any], Any] | None = None
        self._first_at = 0.0  # when the first stop signal was handled (time.monotonic())

    def __enter__(self) -> StopSignals:
        global _active
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("StopSignals can only be used in the main thread")
        for sig in self.signals:
            old = signal.getsignal(sig)
            if old == signal.SIG_IGN:
                continue
            self._previous[sig] = old
            signal.signal(sig, self._handle)
        self._outer, _active = _active, self
        self._hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        _active = self._outer
        if self._hook is not None:
            sys.unraisablehook, self._hook = self._hook, None
        if self.signum is None:
            for sig, old in self._previous.items():
                signal.signal(sig, old if old is not None else signal.SIG_DFL)
        # else a stop was requested and the command is on its way out (its line, its clean-up,
        # the exit): a further signal, such as a closed terminal's second SIGHUP, still ends it at
        # once with its line and 128 + the signal (:meth:`_handle`), where the handler restored
        # here (SIG_DFL for SIGHUP and SIGTERM) would kill it mid-exit
        self._previous.clear()

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        now = time.monotonic()
        if self.signum is not None:  # a second signal: no more waiting for a clean stop
            if signum == self.signum and now - self._first_at < ECHO_WINDOW:
                return  # the same signal sent twice at once ('timeout'): one stop
            exit_at_once(signum, self.hint)
        self.signum = signum
        self._first_at = now
        if self._deferred == 0:
            raise Stopped(signum)

    def _unraisable(self, unraisable: Any) -> None:
        """A signal that arrived while a finalizer (``__del__``, a weakref callback) ran raised
        :class:`Stopped` there, where Python can only report and drop it: say nothing, the stop
        stays requested (:attr:`signum`) and is raised at the next safe point (leaving
        :func:`deferred_stop`, :meth:`raise_if_requested`).  Anything else goes to the previous hook."""
        if isinstance(unraisable.exc_value, Stopped):
            return
        if self._hook is not None:
            self._hook(unraisable)

    def raise_if_requested(self) -> None:
        """Raise :class:`Stopped` if a stop was requested."""
        if self.signum is not None:
            raise Stopped(self.signum)


def exit_at_once(signum: int, hint: str = AGAIN_HINT) -> NoReturn:
    """A second stop signal while the first is being handled: say so in one line on stderr
    (``arena: interrupted (Ctrl-C) again: stopped at once; <hint> <TRACKER_NOTE>``) and end the
    process at once with :func:`exit_status`, without any clean-up.  Further stop signals are
    blocked first, so a held-down Ctrl-C gives one line, not one per signal.

    The worker pool's named semaphores are left to the standard library's resource tracker,
    which removes them and says so: removing them here could break a worker that is still
    starting (it opens them by name).  A SIGHUP does not kill the tracker when it was started by
    :func:`start_resource_tracker`."""
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    lead = "\n" if os.isatty(2) else ""  # after the terminal's echoed "^C"
    with contextlib.suppress(OSError):
        os.write(
            2,
            f"{lead}arena: {Stopped(signum).how()} again: stopped at once; {hint} {TRACKER_NOTE}\n".encode(),
        )
    os._exit(exit_status(signum))


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, unless it already runs, so that a SIGHUP to
    the whole process group (a closed terminal) does not kill it.

    The tracker removes the named semaphores of this process's pools (``/dev/shm/sem.mp-*``) that
    are still there when the last process holding its pipe ends: after :func:`exit_at_once`, a
    ``kill -9``.  It ignores SIGINT and SIGTERM itself, but not SIGHUP, whose default action
    killed it while the command stopped cleanly: the pool's clean-up then relaunched it with a
    warning and tracebacks, and after a second signal (a terminal's hang-up and its shell's) the
    pool's semaphores stayed in /dev/shm for good.

    Here the tracker is started with SIGHUP blocked in the calling thread: the child keeps that
    mask through exec (the tracker unblocks only SIGINT and SIGTERM, CPython 3.11 to 3.13), so a
    SIGHUP stays pending there and it ends as usual, when its pipe closes.  The calling thread's
    mask is restored at once (a SIGHUP that arrived meanwhile is delivered then, not lost: why it
    is blocked rather than ignored, which would drop it); processes started later, the pool's
    workers, are not affected and still stop cleanly on SIGHUP.

    Call it before creating a multiprocessing pool, queue, lock or value (the first of these
    starts the tracker, unprotected) in a process that stops cleanly on SIGHUP; any thread will
    do.  A tracker already running is left as it is.
    """
    from multiprocessing import resource_tracker

    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    try:
        resource_tracker.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def ignore_stop_signals() -> None:
    """Ignore SIGINT, SIGTERM and SIGHUP from now on: for a process that has stopped, said so and
    only has its exit left.  The interpreter restores their default action as it shuts down, so a
    further signal then (a closed terminal sends SIGHUP twice: the terminal's and its shell's)
    killed the process by the signal, its exit status lost; an ignored one stays ignored."""
    for sig in STOP_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_IGN)


def stop_requested() -> int | None:
    """The signal that asked the active :class:`StopSignals` to stop, if any (else None; also
    None when no :class:`StopSignals` is active)."""
    return _active.signum if _active is not None else None


@contextmanager
def deferred_stop() -> Iterator[None]:
    """Within this block a stop signal is only recorded (see :func:`stop_requested`); the code
    inside is expected to poll for it and stop at a safe point.  On leaving the block, a stop
    that was requested and not acted upon raises :class:`Stopped`.  Without an active
    :class:`StopSignals` this does nothing (signals behave as they otherwise would)."""
    active = _active
    if active is None:
        yield
        return
    active._deferred += 1
    try:
        yield
    finally:
        active._deferred -= 1
    if active._deferred == 0:
        active.raise_if_requested()


def thread_stacks() -> str:
    """Where every thread of this process is now (for a log: which call a slow stop waits in)."""
    frames = sys._current_frames()
    parts = []
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.ident is not None else None
        if frame is None:
            continue
        stack = "".join(traceback.format_stack(frame)[-12:])
        parts.append(f"thread {thread.name!r}{' (daemon)' if thread.daemon else ''}:\n{stack}")
    return "\n".join(parts)


# --------------------------------------------------------------------------- parent death


def set_parent_death_signal(sig: int) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux
    ``PR_SET_PDEATHSIG``); False where that is not available.

    Careful: the kernel sends it when the parent *thread* that created this process exits, so
    the parent must create it from a thread that outlives it (its main thread, say).  Call
    :func:`parent_alive` just after: a parent that died before the call sends nothing.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def parent_alive(parent_pid: int) -> bool:
    """Whether this process is still the child of ``parent_pid`` (an orphan is re-parented to
    init or to a subreaper, so its parent pid changes)."""
    return os.getppid() == parent_pid


class ParentWatch:
    """A daemon thread that calls ``on_death()`` once, when this process's parent ``parent_pid``
    is gone (checked every ``interval`` seconds): the backstop of a parent-death signal."""

    def __init__(self, parent_pid: int, on_death: Callable[[], None], interval: float = 0.2) -> None:
        self.parent_pid = parent_pid
        self.on_death = on_death
        self.interval = interval
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="arena-parent-watch", daemon=True)

    def start(self) -> ParentWatch:
        """Start watching."""
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if not parent_alive(self.parent_pid):
                self.on_death()
                return

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()


# --------------------------------------------------------------------------- processes


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot, /proc/PID/stat field 22), or
    None when there is no such process (or it is a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def process_host() -> str:
    """Where this process's pids mean something: the host name, and the pid namespace when it
    can be read (``vm [pid namespace 4026531836]``).  Two processes see each other's pids only
    when this is the same for both: containers that share a host name (and a data folder) but
    not their pids are told apart, so one never judges another's process gone."""
    host = socket.gethostname()
    space = pid_namespace()
    return f"{host} [pid namespace {space}]" if space else host


@dataclass(frozen=True)
class ProcessRef:
    """A process named by pid and start time: never confused with a later one reusing the pid."""

    pid: int
    start: int | None

    @classmethod
    def of(cls, pid: int) -> ProcessRef:
        """The process ``pid`` as it is now."""
        return cls(pid, process_start(pid))

    def alive(self) -> bool:
        """Whether this very process still runs (not a zombie, not a reused pid)."""
        now = process_start(self.pid)
        return now is not None and (self.start is None or now == self.start)

    def signal(self, sig: int) -> bool:
        """Send ``sig`` if this very process still runs; whether it was sent."""
        if not self.alive():
            return False
        try:
            os.kill(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def to_json(self) -> dict[str, int | None]:
        return {"pid": self.pid, "start": self.start}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcessRef:
        start = data.get("start")
        return cls(int(data["pid"]), int(start) if start is not None else None)


def marked_processes(name: str, value: str) -> list[ProcessRef]:
    """Live processes (of this user: others' environments are unreadable) whose environment has
    ``name=value``, this process excepted."""
    needle = f"{name}={value}".encode()
    out = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            ref = ProcessRef.of(int(entry))
            if ref.start is not None:
                out.append(ref)
    return out


def kill_group_or_process(ref: ProcessRef, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group ``ref`` leads (a bot and its children), or to the
    process alone when it leads none; nothing when the process is gone."""
    if not ref.alive():
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(ref.pid) == ref.pid:
            os.killpg(ref.pid, sig)
            return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(ref.pid, sig)


def wait_dead(refs: Sequence[ProcessRef], timeout: float) -> list[ProcessRef]:
    """Wait until none of ``refs`` runs; return those still running after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        left = [r for r in refs if r.alive()]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


# --------------------------------------------------------------------------- a supervised child


def _die_with_parent() -> None:  # runs in the child between fork and exec
    set_parent_death_signal(signal.SIGTERM)


def run_supervised(
    argv: Sequence[str], *, env: dict[str, str] | None = None, pass_on_as: int | None = None
) -> tuple[int, int | None]:
    """Run ``argv`` as a child that dies with this process (a parent-death SIGTERM) in a process
    group of its own, so that a signal sent to this process's group reaches it only once: from
    here.  SIGINT, SIGTERM and SIGHUP are passed on to it (once; as ``pass_on_as`` when given,
    for a child that stops cleanly on one signal only) and it is waited for.

    Returns ``(its exit status, the stop signal received or None)``.  Call it from the main
    thread of a process that has no other threads (the parent-death signal follows the thread
    that starts the child).
    """
    received: list[int] = []
    proc = subprocess.Popen(list(argv), env=env, start_new_session=True, preexec_fn=_die_with_parent)

    def forward(signum: int, _frame: FrameType | None) -> None:
        if not received:
            received.append(signum)
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signum if pass_on_as is None else pass_on_as)

    previous = {
        sig: signal.signal(sig, forward) for sig in STOP_SIGNALS if signal.getsignal(sig) != signal.SIG_IGN
    }
    try:
        code = proc.wait()
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, (received[0] if received else None)
