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

ESCAPE_WAIT = 0.03
"""Seconds to wait for the rest of an escape sequence (a lone Esc is a key of its own)."""


def _utf8_length(lead: int) -> int:
    """The length of the UTF-8 character ``lead`` starts (1 for a byte that starts none)."""
    if 0xF0 <= lead <= 0xF4:
        return 4
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xC2 <= lead <= 0xDF:
        return 2
    return 1


def split_keys(data: bytes) -> tuple[list[str], bytes]:
    """The keys ``data`` holds, in order, and what is left of a key cut short at its end (an
    escape sequence or a UTF-8 character still arriving).  A key is a character, a whole CSI
    sequence (``ESC [`` parameters then one final byte, e.g. ``"\\x1b[C"``, ``"\\x1b[5~"``)
    or SS3 sequence (``ESC O`` and one byte), or a lone Esc.  Several keys arrive in one read
    when a key is held or keys are pasted: each is one key (the reader took Esc and the next 7
    bytes as one key, so three arrows in one read moved one step and the rest were lost)."""
    keys: list[str] = []
    i = 0
    while i < len(data):
        if data[i] == 0x1B:
            if i + 1 >= len(data):
                return keys, data[i:]
            kind = data[i + 1]
            if kind == ord("O"):
                if i + 2 >= len(data):
                    return keys, data[i:]
                end = i + 3
            elif kind == ord("["):
                j = i + 2
                while j < len(data) and 0x20 <= data[j] <= 0x3F:  # parameters, intermediates
                    j += 1
                if j >= len(data):
                    return keys, data[i:]
                end = j + 1  # the final byte
            else:
                end = i + 1  # Esc before an ordinary key: Esc, then that key
            keys.append(data[i:end].decode("utf-8", errors="replace"))
            i = end
            continue
        n = _utf8_length(data[i])
        end = i + 1
        while end < min(i + n, len(data)) and 0x80 <= data[end] <= 0xBF:  # continuation bytes
            end += 1
        if end == len(data) and end < i + n:
            return keys, data[i:]  # the character's other bytes still arriving
        # a whole character, or a lead byte cut short by another key (an invalid byte is a key
        # of its own: it never takes the keys after it)
        keys.append(data[i:end].decode("utf-8", errors="replace"))
        i = end
    return keys, b""


class KeyReader:
    """The keys typed on ``fd`` (a terminal in cbreak mode), one read at a time."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read(self) -> list[str]:
        """Every key of what ``fd`` has ready (call when it is ready to read): [""] at its end.
        A key cut short is waited for :data:`ESCAPE_WAIT` seconds, then taken as it is."""
        data = os.read(self.fd, 1024)
        if not data:
            return [""]
        keys, rest = split_keys(data)
        while rest:
            more, _, _ = select.select([self.fd], [], [], ESCAPE_WAIT)
            chunk = os.read(self.fd, 1024) if more else b""
            if not chunk:
                keys.append(rest.decode("utf-8", errors="replace"))
                break
            got, rest = split_keys(rest + chunk)
            keys += got
        return keys


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

    keys = KeyReader(fd)
    previous = signal.signal(signal.SIGWINCH, resized)
    try:
        tty.setcbreak(fd)
        with Live(draw(), console=console, screen=True, auto_refresh=False) as live:
            while True:
                ready, _, _ = select.select([fd, wake_r], [], [], timeout())
                if wake_r in ready:
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 256)
                if fd in ready and not all(on_key(key) for key in keys.read()):
                    break  # all() stops at the key that ends the session
                if not ready:
                    on_timeout()
                live.update(draw(), refresh=True)
    finally:
        signal.signal(signal.SIGWINCH, previous)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        os.close(wake_r)
        os.close(wake_w)
