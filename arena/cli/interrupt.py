"""Ctrl-C at the terminal: one line on stderr and exit status 130, at any moment.

This module imports only the standard library so that :func:`arena.cli.main.main` can rely on it
before the heavy imports.  A KeyboardInterrupt that escapes a command (or arrives while modules
are still importing) becomes :func:`exit_interrupted`; from then on a further Ctrl-C during the
interpreter's clean-up ends the process at once instead of printing a traceback.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from types import FrameType
from typing import NoReturn

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
    signal.signal(signal.SIGINT, _exit_now)
    _write_message()
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _ignore_sigint() -> None:
    """Last atexit step: the interpreter is about to restore SIGINT's default action (die by the
    signal, no message); a Ctrl-C in those final moments is ignored instead."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def install() -> None:
    """Call first thing in the entry point: arranges for the interpreter's last moments."""
    atexit.register(_ignore_sigint)  # registered first, so it runs after every other atexit hook


def guard_shutdown() -> None:
    """From now on (the command is over) a Ctrl-C prints the line and ends the process at once."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_with_message)


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
