"""The rules page: ``docs/rules.md`` rendered to HTML on the server.

Links are rewritten for the web: ``#anchors`` stay, the board diagram ``board.svg`` is served at
``/rules/board.svg``, and links to other files of the repository (which the web app does not
serve) become plain text naming the file.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Final

from .markdown import render

BOARD_URL: Final = "/rules/board.svg"


class RulesMissingError(FileNotFoundError):
    """``docs/rules.md`` is not there (the web app runs from an install without the docs)."""


_lock = threading.Lock()
_cache: dict[Path, tuple[float, str]] = {}


def _rewrite(target: str, image: bool) -> str | None:
    if target.startswith("#"):
        return target
    if image and target == "board.svg":
        return BOARD_URL
    return None


def rules_html(path: Path) -> str:
    """The HTML of the rules document at ``path`` (cached until the file changes).

    Raises :class:`RulesMissingError` with what to do when the file does not exist.
    """
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        raise RulesMissingError(
            f"{path} does not exist: the rules page needs the docs/ folder of a source checkout"
        ) from None
    with _lock:
        hit = _cache.get(path)
        if hit is not None and hit[0] == mtime:
            return hit[1]
    html = render(path.read_text(encoding="utf-8"), _rewrite)
    with _lock:
        _cache[path] = (mtime, html)
    return html
