"""What the stuck-pool test's workers run (a module of its own: the workers are spawned and import
it by name)."""

from __future__ import annotations

import os
from pathlib import Path


def send(task: tuple[str, str, int]) -> object:
    """``("big", marker, n)``: say "sending" (this pid in ``marker``) and return ``n`` bytes, which
    the worker then pickles and writes to the pool's result pipe for a while; ``("small", ...)``:
    a small answer at once."""
    kind, marker, size = task
    if kind != "big":
        return "small"
    Path(marker).write_text(str(os.getpid()))
    return b"x" * size
