"""A full-screen terminal loop: keys in, one screen out, redrawn when the terminal is resized.

:func:`run_fullscreen` puts the terminal in cbreak mode and the alternate screen, shows
``screen()``, and redraws after every key, every timer tick and every resize (SIGWINCH).  When the
terminal is smaller than the screen needs (narrower than ``min_width``, or fewer lines than the
screen has at that width, or than ``min_lines`` says the session needs) it shows a short notice
with both sizes instead, until it is enlarged.
Ctrl-C still interrupts (cbreak keeps signals); the terminal is restored whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import termios
import tty
from collections.abc import Callable
from types import FrameType

from rich.console import Console
from rich.live import Live
from rich.text import Text


def read_key(fd: int) -> str:
    """One key from ``fd`` (ready to read): a character, or a whole escape sequence."""
    data = os.read(fd, 1)
    if data == b"\x1b":
        more, _, _ = select.select([fd], [], [], 0.03)
        if more:
            data += os.read(fd, 7)
    return data.decode("utf-8", errors="replace")


def lines_of(console: Console, screen: Text, width: int) -> int:
    """How many lines ``screen`` takes on ``console`` at ``width`` columns (long lines wrap)."""
    return len(console.render_lines(screen, console.options.update_width(width), pad=False))


def too_small(
    console: Console, screen: Text, min_width: int, min_lines: Callable[[int], int] | None = None
) -> Text | None:
    """The notice to show instead of ``screen`` when the terminal cannot hold it, else None.

    ``min_lines(width)``, when given, is the lines the whole session needs at that width (e.g.
    its tallest screen): the notice asks for that, so the size asked for does not change from
    one screen to the next.  It is called only when a screen does not fit (it may be slow)."""
    width, height = console.size
    at = max(width, min_width)
    lines = lines_of(console, screen, at)
    if width >= min_width and height >= lines:
        return None
    if min_lines is not None:
        lines = max(lines, min_lines(at))
    return Text(
        f"The terminal is too small for this viewer: it is {width}×{height}, the viewer needs at "
        f"least {min_width}×{lines} (columns × lines). Enlarge the window: it redraws by itself. "
        "q quits.",
        style="bold yellow",
    )


def run_fullscreen(
    screen: Callable[[], Text],
    on_key: Callable[[str], bool],
    *,
    timeout: Callable[[], float | None],
    on_timeout: Callable[[], None],
    min_width: int,
    min_lines: Callable[[int], int] | None = None,
    console: Console | None = None,
) -> None:
    """Run until ``on_key`` returns False.  ``timeout()`` is how long to wait for a key (None:
    forever); when it passes, ``on_timeout()`` runs.  ``screen()`` is drawn after each event;
    ``min_lines`` as in :func:`too_small`."""
    console = console or Console()
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)

    def resized(_signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(BlockingIOError):
            os.write(wake_w, b"w")

    def draw() -> Text:
        shown = screen()
        return too_small(console, shown, min_width, min_lines) or shown

    previous = signal.signal(signal.SIGWINCH, resized)
    try:
        tty.setcbreak(fd)
        with Live(draw(), console=console, screen=True, auto_refresh=False) as live:
            while True:
                ready, _, _ = select.select([fd, wake_r], [], [], timeout())
                if wake_r in ready:
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 256)
                if fd in ready and not on_key(read_key(fd)):
                    break
                if not ready:
                    on_timeout()
                live.update(draw(), refresh=True)
    finally:
        signal.signal(signal.SIGWINCH, previous)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        os.close(wake_r)
        os.close(wake_w)
