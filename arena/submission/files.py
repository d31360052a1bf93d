"""What an uploaded bot file may be: checked before anything is written.

A bot name follows the registry's rules (:data:`arena.store.bots.NAME_RE`).  A file name is one
plain name (no folders, no ``..``, no leading dot, no control characters).  The content must be
1 byte to :func:`max_upload_bytes` long and either a text script (UTF-8 without NUL bytes) with a
``.py``/``.js``/``.sh`` extension or a ``#!`` line, or a Linux executable (ELF).  Anything else is
"binary junk" and refused with what to send instead.
"""

from __future__ import annotations

import os
import re

from arena.store.botnames import NAME_RE

MAX_UPLOAD_MB_ENV = "ARENA_MAX_UPLOAD_MB"
DEFAULT_MAX_UPLOAD_MB = 5.0
FILENAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}\Z")
SCRIPT_SUFFIXES = (".py", ".js", ".sh")
ELF_MAGIC = b"\x7fELF"


class UploadError(ValueError):
    """An upload that is refused; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        self.status = status
        super().__init__(message)


def max_upload_bytes() -> int:
    """The upload size limit: ``$ARENA_MAX_UPLOAD_MB`` megabytes, else 5 MB."""
    text = os.environ.get(MAX_UPLOAD_MB_ENV, "")
    try:
        mb = float(text) if text else DEFAULT_MAX_UPLOAD_MB
    except ValueError:
        mb = DEFAULT_MAX_UPLOAD_MB
    return int(max(mb, 0.001) * 1_000_000)


def too_large_message(size: int, limit: int | None = None) -> str:
    """What an upload of ``size`` bytes over the limit (default :func:`max_upload_bytes`) is told
    (the server's early 413; ``arena submit`` says the same before sending one)."""
    mb = (max_upload_bytes() if limit is None else limit) / 1e6
    return f"the upload is {size / 1e6:.2f} MB, over the {mb:g} MB limit"


def check_bot_name(name: str) -> str:
    """``name`` if it can name a bot, else :class:`UploadError`."""
    if not NAME_RE.match(name or ""):
        raise UploadError(
            f"bad bot name {name!r}: use 1-64 letters, digits, '_', '.' or '-' (first a letter or digit)"
        )
    return name


def check_filename(filename: str) -> str:
    """The file name to store, or :class:`UploadError` for a path trick or an odd name."""
    raw = filename or ""
    if "/" in raw or "\\" in raw or "\x00" in raw or raw in (".", "..") or ".." in raw:
        raise UploadError(
            f"bad file name {raw!r}: send one plain file name, without folders or '..' (e.g. my_bot.py)"
        )
    if not FILENAME_RE.match(raw):
        raise UploadError(
            f"bad file name {raw!r}: use up to 100 letters, digits, '_', '.', '+' or '-', first a "
            f"letter or digit (e.g. my_bot.py)"
        )
    return raw


def check_content(filename: str, data: bytes, limit: int | None = None) -> bool:
    """Check an upload's bytes; return whether it is an executable (ELF) rather than a script.

    Raises :class:`UploadError`: 400 for an empty file, 413 for one over the limit, 415 for
    content that is neither a script nor an executable.
    """
    limit = max_upload_bytes() if limit is None else limit
    if not data:
        raise UploadError(f"{filename} is empty: a bot is a script or an executable")
    if len(data) > limit:
        raise UploadError(
            f"{filename} is {len(data) / 1e6:.2f} MB, over the {limit / 1e6:g} MB upload limit", 413
        )
    if data.startswith(ELF_MAGIC):
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if not text or "\x00" in text:
        raise UploadError(
            f"{filename} is neither a text script nor a Linux executable (binary data): send a "
            f".py, .js or .sh script (UTF-8), a script with a '#!' line, or an ELF executable",
            415,
        )
    if not (filename.endswith(SCRIPT_SUFFIXES) or text.startswith("#!")):
        raise UploadError(
            f"{filename}: the arena cannot tell how to run it: use a .py, .js or .sh extension or "
            f"start it with a '#!' line",
            415,
        )
    return False
