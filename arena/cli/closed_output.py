"""A command whose output is gone: a pipe whose reader left (``arena ... | head``) or a terminal
that hung up.  Writes then fail (EPIPE, EIO); the command ends quietly, with the status a shell
expects, instead of a traceback nobody can read and an unrelated exit status.  Also what
would make the output go nowhere from the start: a standard stream closed or open the wrong way
(:func:`open_standard_streams`), a ``$COLUMNS`` of 0 (:func:`forget_unusable_width`), an
encoding short of Unicode (:func:`escape_unencodable`).

Standard library only: imported by :mod:`arena.cli.main` before any subcommand."""

from __future__ import annotations

import codecs
import contextlib
import errno
import fcntl
import os
import signal
import sys
from typing import NoReturn

GONE = (errno.EPIPE, errno.EIO)


def output_gone(exc: BaseException) -> bool:
    """True when ``exc`` is a write to a closed pipe or a hung-up terminal."""
    return isinstance(exc, OSError) and exc.errno in GONE


def open_standard_streams() -> None:
    """Give a command started with stdin, stdout or stderr closed (``arena ... 2>&-``, a daemon
    manager) /dev/null in their place, as a well-behaved Unix tool does.

    Without it the first write to the closed stream failed (EBADF): ``arena evaluate ... 2>&-``
    ended before its first game.  And the next file the command opened (the database, a replay)
    could take the free descriptor 2, into which everything written below Python (gRPC's C core
    logs on descriptor 2) would then go.

    A descriptor open the wrong way (``2</dev/null``: stdout or stderr read-only, stdin
    write-only) is replaced too: every write to it failed with EBADF just the same."""
    for fd in (0, 1, 2):
        if not _usable(fd):
            _replaced.add(fd)
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:  # Python found the descriptor closed at start
            with contextlib.suppress(OSError):
                stream = open(fd, mode, closefd=False, errors="backslashreplace")  # noqa: SIM115
                setattr(sys, name, stream)


def escape_unencodable() -> None:
    """Make stdout and stderr write what their encoding cannot hold as escapes (``\\xe4``): in
    ASCII (``PYTHONIOENCODING=ascii``, a C locale without Python's UTF-8 mode) or Latin-1, a bot
    named ``zufällig`` raised UnicodeEncodeError when the result table was printed: a traceback,
    exit 1, the match played and stored but its result never shown.  UTF-8 streams keep their
    own handling of undecodable bytes (``surrogateescape``) unless it is strict."""
    for stream in (sys.stdout, sys.stderr):
        encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
        if encoding is None or errors == "backslashreplace":
            continue
        try:
            utf8 = codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if not utf8 or errors == "strict":
            with contextlib.suppress(AttributeError, ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]


MAX_COLUMNS = 10_000  # wider than any terminal


def forget_unusable_width() -> None:
    """Forget a ``$COLUMNS`` that no terminal has (``0``, a 20-digit number): rich took ``0`` for
    a console with no room and printed nothing at all (a match's result table, a tournament's
    leaderboard, ``arena --help``, even the message of a mistyped option: exit 2 and not a word),
    and a huge width made ``arena --help`` fail (OverflowError, MemoryError).  Without it the
    terminal's own width is used, or the fixed width for a pipe (:func:`arena.termui.make_console`).
    The same for typer's ``$TERMINAL_WIDTH`` (``abc`` made ``arena --help`` a ValueError traceback:
    typer reads it as it is imported)."""
    for name in ("COLUMNS", "TERMINAL_WIDTH"):
        value = os.environ.get(name)
        if value is None:
            continue
        if not (value.isascii() and value.isdigit() and len(value) <= 6 and 0 < int(value) <= MAX_COLUMNS):
            del os.environ[name]


_replaced: set[int] = set()


def replaced_at_start(fd: int) -> bool:
    """Whether the standard descriptor ``fd`` was closed (or open the wrong way) when the command
    started: what is written there goes to /dev/null (:func:`open_standard_streams`)."""
    return fd in _replaced


def _usable(fd: int) -> bool:
    """Whether ``fd`` is open for what a standard stream does with it: read (0) or write (1, 2)."""
    try:
        mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:  # closed
        return False
    return mode != (os.O_WRONLY if fd == 0 else os.O_RDONLY)


def mute() -> None:
    """Point stdout and stderr at /dev/null, so that nothing written later (an ``atexit`` hook,
    the interpreter's last flush) fails again and changes the exit status."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
        os.close(null)


def say_last(message: str) -> None:
    """Print a command's last line on stderr; when stderr is gone (a hung-up terminal: the exit
    status says what happened) it is dropped and the output muted (:func:`mute`)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except OSError:
        mute()


def status_of(exc: BaseException) -> int:
    """The exit status for a command whose output went away while ``exc`` was raised: that of the
    stop being handled when the write failed (a signal's 128 + number: the run stopped cleanly,
    and only its last message was lost); else 1 for a closed pipe (what Python and rich do on
    EPIPE) and 129 for a hung-up terminal (as if stopped by its SIGHUP)."""
    seen: set[int] = set()
    cause: BaseException | None = exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        signum = getattr(cause, "signum", None)
        if isinstance(signum, int):
            return 128 + signum
        if isinstance(cause, SystemExit) and isinstance(cause.code, int):
            return cause.code
        cause = cause.__context__
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        return 1
    return 128 + int(signal.SIGHUP)


def exit_output_gone(exc: BaseException) -> NoReturn:
    """End the command quietly after its output went away (:func:`output_gone`)."""
    mute()
    sys.exit(status_of(exc))
