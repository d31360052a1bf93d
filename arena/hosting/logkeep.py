"""Keep a folder of bot logs within bounds: the oldest logs go first.

Every bot process a host launches writes two logs (``STEM.stdout.log``, ``STEM.stderr.log``, up
to :attr:`arena.sandbox.SandboxLimits.output_bytes` each) into the host's log folder.  A host that
runs for weeks (``arena serve``'s ladder and validations, a lobby, a long tournament) launches
processes without end, and a bot that prints its limit and forfeits every match gets a fresh
process, and two fresh logs, every match: the folder grew without bound.  :func:`trim` deletes
the least recently written logs of one folder until what is left holds at most ``max_bytes`` and
``max_files`` files; the logs of processes still running are never deleted.  What a forfeit needs
as evidence is stored with the match (the stderr's last lines), not read back from these files.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 256 * 1024 * 1024
"""A log folder's bound in bytes (256 MiB: 128 processes at the 1 MiB output limit for both
streams; a bot's usual logs are a few KB)."""

MAX_FILES = 20_000
"""A log folder's bound in files (every process leaves two, most of them a few bytes)."""

SUFFIX = ".log"


@dataclass(frozen=True)
class Trimmed:
    """What one :func:`trim` deleted."""

    files: int
    bytes: int


def trim(
    folder: Path,
    *,
    max_bytes: int = MAX_BYTES,
    max_files: int = MAX_FILES,
    keep: Collection[Path] = (),
) -> Trimmed:
    """Delete the least recently modified ``*.log`` files directly in ``folder`` until the rest
    hold at most ``max_bytes`` bytes in at most ``max_files`` files.  Files in ``keep`` (the logs
    of running processes) are never deleted, and count toward the bounds.  Other files and
    subfolders are left alone.  A folder that does not exist, a file that vanishes meanwhile (a
    second host trimming the same folder) or one that cannot be deleted is passed over: this
    never raises for the folder's contents."""
    logs: list[tuple[float, str, int]] = []  # (modified, path, size) of the deletable ones
    total = count = 0
    kept = {os.path.abspath(p) for p in keep}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return Trimmed(0, 0)
    for entry in entries:
        if not entry.name.endswith(SUFFIX):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        total += st.st_size
        count += 1
        if os.path.abspath(entry.path) not in kept:
            logs.append((st.st_mtime, entry.path, st.st_size))
    logs.sort()
    files = freed = 0
    for _modified, path, size in logs:
        if total <= max_bytes and count <= max_files:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            files += 1
            freed += size
        total -= size  # (gone, or not deletable: not ours to count on either way)
        count -= 1
    return Trimmed(files, freed)
