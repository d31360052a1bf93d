"""``arena replays view`` in a real terminal (tmux): it redraws when the window is resized, and says
so when the window is too small for it, until it is enlarged again; keys that arrive together are
each a key.  (The key splitting itself: test_fullscreen_keys.py.)"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import ARENA, run_arena


class Tmux:
    """A private tmux server (its own socket) with one window running a command."""

    def __init__(self, name: str) -> None:
        self.base = ["tmux", "-L", name, "-f", "/dev/null"]
        # where tmux puts the server's socket for -L NAME (kill-server leaves the file behind)
        self.socket = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}" / name

    def __call__(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "v")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not on the screen within {timeout} s:\n{shown}")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (./dev test installs it as root)")
    server = Tmux(f"arena-test-{os.getpid()}-{time.monotonic_ns()}")
    yield server
    subprocess.run([*server.base, "kill-server"], capture_output=True, timeout=30)
    server.socket.unlink(missing_ok=True)


def test_viewer_redraws_on_resize_and_says_when_too_small(home: Path, tmux: Tmux) -> None:
    played = run_arena(["match", "greedy", "random", "--seed", "5", "--quiet", "--no-sandbox"], home)
    assert played.returncode == 0, played.stdout + played.stderr
    command = " ".join(
        ["env", "-u", "COLUMNS", "-u", "LINES", f"ARENA_HOME={shlex.quote(str(home))}", "TERM=xterm-256color",
         shlex.quote(str(ARENA)), "replays", "view", "1", ";", "echo", "viewer-exited-$?", ";", "sleep", "60"]
    )  # fmt: skip
    tmux("new-session", "-d", "-s", "v", "-x", "100", "-y", "50", command)
    big = tmux.wait_for("step 0/")
    assert "lifeguard:" in big and "too small" not in big

    tmux("resize-window", "-t", "v", "-x", "50", "-y", "15")  # no key pressed: the resize alone redraws
    small = tmux.wait_for("too small")
    assert "it is 50×15" in " ".join(small.split()), small
    assert "lifeguard:" not in small

    tmux("resize-window", "-t", "v", "-x", "100", "-y", "50")
    again = tmux.wait_for("lifeguard:")
    assert "step 0/" in again and "too small" not in again

    # three arrows in one write (a held key, a paste): three steps (the reader took the first
    # arrow and the next bytes as one unknown key: step 2 at most, the rest lost)
    tmux("send-keys", "-t", "v", "Right", "Right", "Right")
    tmux.wait_for("step 3/")
    tmux("send-keys", "-t", "v", "Left", "l", "Left", "Left")
    tmux.wait_for("step 1/")

    tmux("send-keys", "-t", "v", "?")  # the board's legend, in the viewer too
    tmux.wait_for("How to read the board")
    tmux("send-keys", "-t", "v", "q")
    tmux.wait_for("viewer-exited-0")
