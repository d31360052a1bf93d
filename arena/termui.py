"""Consoles for output: real terminal width on a terminal, a wide fixed width when piped."""

from __future__ import annotations

from rich.console import Console

PIPE_WIDTH = 120


def make_console(*, stderr: bool = False) -> Console:
    """A rich console; when not a terminal, lines are up to 120 columns instead of 80."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=PIPE_WIDTH)
    return console
