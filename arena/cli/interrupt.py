"""Ctrl-C at the terminal: one line on stderr and exit status 130, at any moment.

This module imports only the standard library so that :func:`arena.cli.main.main` can rely on it
before the heavy imports.  A KeyboardInterrupt that escapes a command (or arrives while modules
are still importing) becomes :func:`exit_interrupted`; from then on a further Ctrl-C during the
interpreter's clean-up ends the process at once instead of printing a traceback.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import sys
from collections.abc import Coroutine
from types import FrameType
from typing import Any, Final, NoReturn, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a process ended by Ctrl-C
MESSAGE = "arena: interrupted (Ctrl-C)"


class Interrupted(BaseException):
    """A KeyboardInterrupt that escaped a command, carried past click's own handling of it."""


def _write_message() -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    lead = "\n" if _isatty(sys.stderr) else ""  # after the terminal's echoed "^C"
    try:
        sys.stderr.write(f"{lead}{MESSAGE}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def _exit_now(_signum: int, _frame: FrameType | None) -> None:
    """A second Ctrl-C while cleaning up: leave at once, quietly (the line is already out)."""
    os._exit(EXIT_INTERRUPTED)


def _exit_with_message(_signum: int, _frame: FrameType | None) -> None:
    """Ctrl-C after the command finished (interpreter shutdown): the one line, then leave."""
    _write_message()
    os._exit(EXIT_INTERRUPTED)


def exit_interrupted() -> NoReturn:
    """Print the one line and end with status 130.

    The command's own clean-up has run by now (the interrupt unwound through it).  The atexit
    hooks run next (a further Ctrl-C skips them); the rest of the interpreter's shutdown is skipped:
    it would only wait for stray threads and collect objects that a second Ctrl-C left half-closed,
    whose finalizers print "Exception ignored" tracebacks.
    """
    global _pending
    signal.signal(signal.SIGINT, _exit_now)
    _mark_interrupting()
    _pending = None  # this is the interrupt's end: nothing more to deliver or print
    _write_message()
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _ignore_sigint() -> None:
    """Last atexit step: the interpreter is about to restore SIGINT's default action (die by the
    signal, no message); a Ctrl-C in those final moments is ignored instead.  A Ctrl-C that a
    finalizer swallowed and that is still on its way back to the main thread ends the process as
    interrupted: the line and status 130.  SIGTERM and SIGHUP are ignored too: the interpreter
    would restore their default action, and a second SIGHUP of a closed terminal (or a second
    SIGTERM) in those moments killed a command that had stopped cleanly, its status lost.  A
    SIGTERM or SIGHUP that a finalizer swallowed and that is still to be sent again ends the
    process as stopped: its line and 128 + the signal."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_IGN)
    if _pending == signal.SIGINT:
        _exit_with_message(signal.SIGINT, None)
    if _pending is not None:
        _exit_terminated(_pending, None)


def _interrupt_cause(exc: BaseException | None) -> bool:
    return exc is not None and during_interrupt(exc)


_LOUD_WHEN_CUT: Final = ("asyncio", "grpc")
_interrupting = False  # set once a Ctrl-C is being handled


def _quiet_interrupts(record: Any) -> bool:
    """A logging filter: drops a record whose exception a Ctrl-C caused (a library logging
    "Exception closing connection" on its way out, e.g. SQLAlchemy's pool, which then re-raises
    the interrupt), and, once a Ctrl-C is being handled, what asyncio and gRPC log about tasks
    the interrupt cut short (gRPC's server shut down while it was still starting logs an
    ``InvalidStateError`` of its own, and asyncio "Task exception was never retrieved")."""
    if record.exc_info and _interrupt_cause(record.exc_info[1]):
        return False
    return not (_interrupting and str(record.name).split(".", 1)[0] in _LOUD_WHEN_CUT)


def _mark_interrupting() -> None:
    global _interrupting
    _interrupting = True


_REDELIVERY_DELAY = 0.02  # seconds: long enough for the hook to have returned to the main code
_pending: int | None = None  # a signal a finalizer swallowed, not yet delivered again


_in_hook = False  # the main thread is in :func:`_unraisable` (no signal is delivered again meanwhile)
_HOOK_WAIT = 5.0  # seconds the helper thread waits at most for the hook to return


def _redeliver(signum: int) -> None:
    """In a helper thread: trip ``signum`` for the main thread once the hook is behind it (it
    waits for the hook to return, then a moment more: on a loaded machine a fixed delay alone
    ran out while the hook still ran, and the handler's exception was dropped there again)."""
    global _pending
    import time

    waited = 0.0
    while _in_hook and waited < _HOOK_WAIT:
        time.sleep(0.005)
        waited += 0.005
    time.sleep(_REDELIVERY_DELAY)
    _pending = None
    _thread.interrupt_main(signal.Signals(signum))


def _redeliver_later(signum: int) -> None:
    """Deliver ``signum`` to the main thread again a moment from now (:func:`_unraisable`); a
    process that ends before that ends as if it had arrived (:func:`_ignore_sigint`)."""
    global _pending
    import threading

    _pending = signum
    threading.Thread(target=_redeliver, args=(signum,), name="arena-redeliver", daemon=True).start()


def _unraisable(unraisable: Any) -> None:
    """A Ctrl-C that landed while a finalizer ran (``__del__``, a weakref callback) raised its
    KeyboardInterrupt where Python can only print and drop it: print nothing and deliver the
    interrupt again to the main thread, where it unwinds the command as usual.

    The delivery comes from a helper thread a moment later: tripping the signal here would run the
    handler inside this hook (Python checks for signals right after the call returns), and the
    KeyboardInterrupt it raises would be dropped once more.  Should the handler still run here (the
    hook delayed past the helper's wait), that KeyboardInterrupt is caught and delivered again; a
    process that reaches its end with a delivery pending ends as interrupted (see
    :func:`_ignore_sigint`).

    A SIGTERM or SIGHUP whose :class:`Terminated` a finalizer swallowed the same way (the command
    went on as if nothing had been sent) is delivered again too; a process that ends before that
    ends as stopped: its line and 128 + the signal.

    A signal whose handler runs inside this hook all the same raises here, where it would be
    dropped once more ("Exception ignored in sys.unraisablehook"): it is caught and delivered
    again too."""
    global _in_hook
    _in_hook = True
    try:
        _swallowed(unraisable)
    except Terminated as stop:
        _redeliver_later(stop.signum)
    except KeyboardInterrupt:
        _redeliver_later(signal.SIGINT)
    finally:
        _in_hook = False


def _swallowed(unraisable: Any) -> None:
    """:func:`_unraisable`'s work: deliver again what a finalizer swallowed, or pass it on."""
    if isinstance(unraisable.exc_value, Terminated):
        _mark_interrupting()
        _redeliver_later(unraisable.exc_value.signum)
        return
    if not _interrupt_cause(unraisable.exc_value):
        _previous_unraisable(unraisable)
        return
    _mark_interrupting()
    _redeliver_later(signal.SIGINT)


_previous_unraisable = sys.unraisablehook


def _terminate(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP outside a command's event loop (while it starts: bots resolved, the
    database opened, a match row made; or after it: the result printed): unwind the command as a
    Ctrl-C does there, so the clean-up it has for an interrupt runs and it ends with one line and
    128 + the signal.  Before, the default action killed the process on the spot: no line, status
    -N, and a match row made before the match began was left ``running`` for ever.  (A signal
    while ``arena match`` writes its result still leaves that row ``running``, as ``kill -9``
    does.)  Inside the event loop :func:`run_interruptible` has its own handler (the exception
    must not land in gRPC's core)."""
    raise Terminated(signum)


def _exit_terminated(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP after the command finished (interpreter shutdown): the line, then leave."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{Terminated(signum).message}\n")
        sys.stderr.flush()
    os._exit(128 + signum)


def install() -> None:
    """Call first thing in the entry point: arranges for the interpreter's last moments, for a
    Ctrl-C inside a finalizer, for libraries that log the interrupt they were cut by, and for
    SIGTERM and SIGHUP before and after a command's event loop (:func:`_terminate`; left
    ignored when they are, as under ``nohup``)."""
    global _previous_unraisable
    atexit.register(_ignore_sigint)  # registered first, so it runs after every other atexit hook
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _terminate)
    if sys.unraisablehook is not _unraisable:
        _previous_unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable
    import logging  # here, not at the top: a Ctrl-C before main() runs meets Python's own handler

    root = logging.getLogger()
    if not root.handlers:  # what Python's last-resort handler does (warnings and up, the bare
        handler = logging.StreamHandler()  # message on stderr), minus the interrupt's echoes
        handler.setLevel(logging.WARNING)
        handler.addFilter(_quiet_interrupts)
        root.addHandler(handler)


def guard_shutdown() -> None:
    """From now on (the command is over) a Ctrl-C prints the line and ends the process at once,
    and so do SIGTERM and SIGHUP (with their own line and status)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_with_message)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is _terminate:
            signal.signal(sig, _exit_terminated)


def during_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while a Ctrl-C was being handled (a KeyboardInterrupt in its
    chain): an error of the clean-up that the interrupt cut short, not one to show a traceback for."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt | Interrupted):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


def from_interrupt(exc: SystemExit) -> bool:
    """Whether click turned a Ctrl-C into this exit (``Exit(130)`` raised from a KeyboardInterrupt)."""
    context = exc.__context__
    return (
        exc.code == EXIT_INTERRUPTED
        and context is not None
        and isinstance(context.__cause__, KeyboardInterrupt)
    )


def exit_terminated(status: int) -> NoReturn:
    """End a command that SIGTERM or SIGHUP stopped (its clean-up has run, its line is out) as
    :func:`exit_interrupted` ends one stopped by Ctrl-C: the atexit hooks run, the rest of the
    interpreter's shutdown is skipped.  That shutdown collected what the stop left of the event
    loop, bot processes' transports among them, and printed "Exception ignored ... Event loop is
    closed" tracebacks after the line (a SIGTERM in a match's last moments, often); a Ctrl-C
    never did.  A further stop signal meanwhile leaves at once, with the same status."""
    global _pending
    _pending = None  # this is the stop's end: its line is out
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, lambda _s, _f: os._exit(status))
    _mark_interrupting()
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


class Terminated(SystemExit):
    """A command's coroutine was stopped by SIGTERM or SIGHUP (:func:`run_interruptible`): its
    clean-up has run; the exit status is 128 + the signal, and the message says which.  (The
    same status as :class:`arena.lifecycle.Stopped`, not a subclass: ``arena --help`` must not
    import that module, ``cli/test_startup.py``.)"""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + int(signum))
        self.signum = int(signum)
        self.message = f"arena: stopped ({signal.Signals(signum).name})"


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` for a command, with Ctrl-C handled at the right place: the first
    Ctrl-C cancels ``main`` (its clean-up runs: bots stopped, the match recorded as interrupted)
    and :class:`KeyboardInterrupt` is raised once it has unwound; a second one during that
    clean-up prints the line and ends the process at once (what :func:`exit_interrupted` would
    do).  A KeyboardInterrupt is never raised in the middle of the event loop, where it could
    land inside gRPC's C core (which crashed the process with SIGSEGV).  SIGTERM and SIGHUP
    (unless ignored) stop it the same way and raise :class:`Terminated` (exit 128 + the signal)
    once it has unwound: before, they killed the process at once and a stand-alone match was
    left ``running`` in the database for ever."""
    import asyncio

    task: asyncio.Task[T] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    interrupted = False
    stopped_by: int | None = None

    async def outer() -> T:
        nonlocal task, loop
        task, loop = asyncio.current_task(), asyncio.get_running_loop()
        return await main

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        _mark_interrupting()
        if interrupted:
            _exit_with_message(signum, frame)
        if task is None or loop is None or task.done():
            raise KeyboardInterrupt  # not running yet (or over): nothing of gRPC's underneath
        interrupted = True
        loop.call_soon_threadsafe(task.cancel)

    def on_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted, stopped_by
        if interrupted:  # a second signal while the first is handled: leave at once
            os._exit(128 + signum)
        _mark_interrupting()  # what asyncio says of the tasks and child watchers the stop cuts
        if task is None or loop is None or task.done():
            raise Terminated(signum)
        interrupted, stopped_by = True, signum
        loop.call_soon_threadsafe(task.cancel)

    previous = signal.signal(signal.SIGINT, on_sigint)  # asyncio.run keeps a handler it did not set
    others = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) != signal.SIG_IGN:  # nohup: stays ignored
            others[sig] = signal.signal(sig, on_stop)
    try:
        result = asyncio.run(outer())
    except asyncio.CancelledError:
        if stopped_by is not None:
            raise Terminated(stopped_by) from None
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
        for sig, handler in others.items():
            signal.signal(sig, handler)
    if stopped_by is not None:
        raise Terminated(stopped_by)
    if interrupted:
        raise KeyboardInterrupt
    return result
