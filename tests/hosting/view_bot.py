#!/usr/bin/env python3
"""Plays the first legal action, and first writes to stderr what it sees of its world: its uid,
whether it can see the arena's home directory, and the command of its PID namespace's init."""

import os
import sys
from pathlib import Path

from arena.sdk import Bot, run


def view() -> str:
    try:
        init = Path("/proc/1/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError as exc:
        init = f"unreadable ({exc.strerror})"
    home = os.environ.get("VIEW_PROBE_DIR", "")
    return f"view: uid={os.getuid()} probe_dir_visible={bool(home) and Path(home).exists()} init={init}"


class ViewBot(Bot):
    name = "view"

    def choose(self, state, legal):  # type: ignore[no-untyped-def]
        return legal[0]


if __name__ == "__main__":
    print(view(), file=sys.stderr, flush=True)
    run(ViewBot())
