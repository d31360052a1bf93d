"""Reading a game record file from the command line, bounded.

A game record is at most a few hundred kilobytes (a game has a few hundred events), so a file
far larger than that is not one: reading it whole (``/dev/zero``, a disk image, a log) would only
fill the memory.  :func:`read_record_text` reads at most :data:`RECORD_FILE_LIMIT` bytes and
refuses a larger file with :class:`RecordFileTooLarge` instead.
"""

from __future__ import annotations

from pathlib import Path

RECORD_FILE_LIMIT = 64 * 1024 * 1024
"""The most bytes a record file may hold (64 MiB: over a hundred times the largest real record)."""


class RecordFileTooLarge(ValueError):
    """The file holds more than :data:`RECORD_FILE_LIMIT` bytes, so it is not a game record."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(
            f"{path} holds more than {limit // (1024 * 1024)} MiB; a game record is at most a few "
            "hundred KB, so this is not one (is it the right file?)"
        )
        self.path = path
        self.limit = limit


def read_record_text(path: Path, limit: int = RECORD_FILE_LIMIT) -> str:
    """The text of the record file ``path``, decoded as UTF-8.

    Raises :class:`OSError` when the file cannot be opened or read, :class:`RecordFileTooLarge`
    when it holds more than ``limit`` bytes (only ``limit + 1`` bytes are ever read, so an endless
    file such as ``/dev/zero`` is refused at once) and :class:`UnicodeDecodeError` when it is not
    UTF-8 text.
    """
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise RecordFileTooLarge(path, limit)
    return data.decode("utf-8")
