"""Checking and writing the files and folders a command's output goes to (``--out``, ``--logs``,
``--json``): the checks run before the work whose result goes there, so a bad path costs nothing;
each returns None when all is well, else the reason in words (for ``cannot write PATH: REASON``)."""

from __future__ import annotations

import os
from pathlib import Path


def file_in_the_way(folder: Path) -> Path | None:
    """The file that stands where ``folder`` or one of its parents must be a folder, or None
    (a data folder, ``--out`` or ``--logs`` path under a regular file)."""
    return next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)


def output_problem(path: Path) -> str | None:
    """Why the file ``path`` cannot be written, or None when it can.

    Creates the missing parent folders (as ``--out`` of every command does) and opens the file for
    appending, which changes nothing in it; a file that did not exist is removed again.  Call it
    before the work whose result goes to ``path``, so that a bad path costs nothing."""
    if path.is_dir():
        return "it is a folder, not a file"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        return f"{file_in_the_way(path.parent) or path.parent} is a file, not a folder"
    except OSError as exc:
        return exc.strerror or str(exc)
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    if not existed:
        path.unlink(missing_ok=True)
    return None


def folder_problem(path: Path) -> str | None:
    """Why files cannot be written in the folder ``path`` (created when missing), or None."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        return f"{file_in_the_way(path) or path} is a file, not a folder"
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(path, os.W_OK | os.X_OK):
        return "no permission to write in it"
    return None


def write_problem(path: Path, text: str) -> str | None:
    """Write ``text`` to ``path`` (creating missing folders); None, or why it failed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
