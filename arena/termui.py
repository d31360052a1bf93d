"""Consoles for output: real terminal width on a terminal, a wide fixed width when piped."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from rich.console import Console

from arena.safetext import small_int

PIPE_WIDTH = 120


def make_console(*, stderr: bool = False) -> Console:
    """A rich console; when not a terminal, lines are up to 120 columns instead of 80 (or
    ``$COLUMNS`` when that is set)."""
    console = Console(stderr=stderr)
    if not console.is_terminal and small_int(os.environ.get("COLUMNS", "")) is None:
        console = Console(stderr=stderr, width=PIPE_WIDTH)
    return console


def keep_going_on_closed_pipe(console: Console, then: Callable[[], None] | None = None) -> None:
    """Make ``console`` go quiet when its pipe's reader leaves (then call ``then``), instead of
    rich's own reaction, ``SystemExit(1)`` with /dev/null put over stdout: that passes every
    ``except OSError`` and ended a run at its first line (the demo's banner, a tournament's live
    display on a pipe taken for a terminal: ``FORCE_COLOR``, ``TTY_COMPATIBLE``)."""

    def quiet() -> None:
        console.quiet = True
        if then is not None:
            then()

    console.on_broken_pipe = quiet  # type: ignore[method-assign]


class StatusLine:
    """A progress line on stderr: rewritten in place on a terminal, one plain line per update
    otherwise (logs, CI). ``quiet`` silences it."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()

    def write(self, text: str) -> None:
        """Show ``text`` as the current status."""
        if self.quiet:
            return
        try:
            if self.tty:
                sys.stderr.write("\r\x1b[2K" + text)
                sys.stderr.flush()
            else:
                sys.stderr.write(text + "\n")
        except OSError:  # a closed pipe or a hung-up terminal: the progress is lost, not the run
            self.quiet = True

    def close(self) -> None:
        """Clear the line on a terminal (plain lines stay)."""
        if self.tty and not self.quiet:
            try:
                sys.stderr.write("\r\x1b[2K")
                sys.stderr.flush()
            except OSError:
                self.quiet = True
