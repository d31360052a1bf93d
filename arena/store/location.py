"""Where the database is and which schema this Pool Arena bundles, with the standard library only.

Everything here is cheap to import (no SQLAlchemy, no Alembic), so a command can find its database
and check its schema revision before deciding whether it needs the ORM at all (see
:mod:`arena.store.quickread`).  :mod:`arena.store.db` re-exports these names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote, unquote

from arena.outpaths import file_in_the_way

from .errors import DatabaseReadOnlyError, DatabaseUnavailableError, NoDatabaseError, StoreError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
DEFAULT_HOME = "arena-data"


def arena_home() -> Path:
    """The data directory: ``$ARENA_HOME`` or ``./arena-data`` (in the current folder).

    Nothing is created here: openers for writing create it when they need it."""
    return Path(os.environ.get("ARENA_HOME") or DEFAULT_HOME)


def database_url() -> str:
    """``$ARENA_DATABASE_URL``, else SQLite at ``<ARENA_HOME>/arena.db`` (nothing is created).

    The path is percent-encoded, as a URL's path must be: written as it is, a data directory
    named with ``%41`` had its database in one named with ``A``, and one named with ``?`` had it
    in a file beside the folder (the rest was read as the URL's options), apart from the logs
    and bot files that stayed in the folder.  A data directory whose name is not UTF-8 text (a
    Latin-1 ``ä``) has no URL: :class:`DatabaseUnavailableError` says so."""
    url = os.environ.get("ARENA_DATABASE_URL")
    if url:
        return url
    path = str(arena_home() / "arena.db")
    try:
        return "sqlite:///" + quote(path, safe="/ ")
    except UnicodeEncodeError:  # bytes that are not UTF-8, read as lone surrogates
        shown = path.encode("utf-8", "backslashreplace").decode("utf-8")
        raise DatabaseUnavailableError(
            f"the database {shown} cannot be opened: its folder's name is not UTF-8 text, which the "
            f"database URL needs. Rename the folder, or set ARENA_HOME to another one."
        ) from None


def how_chosen() -> str:
    """How the current database was chosen, for messages (the environment variables involved)."""
    if os.environ.get("ARENA_DATABASE_URL"):
        return "chosen by ARENA_DATABASE_URL"
    if os.environ.get("ARENA_HOME"):
        return f"chosen by ARENA_HOME={os.environ['ARENA_HOME']}; ARENA_DATABASE_URL is not set"
    return (
        f"neither ARENA_HOME nor ARENA_DATABASE_URL is set, so it is ./{DEFAULT_HOME}/arena.db "
        f"in the current folder"
    )


def plain_sqlite_path(url: str) -> Path | None:
    """The absolute file of a plain ``sqlite:///PATH`` URL (no driver, no query string); None for
    anything else (another database, an in-memory one, options this parser does not read), for
    which callers use SQLAlchemy's full URL parsing instead."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or "?" in url or "#" in url:
        return None
    path = unquote(url[len(prefix) :])
    if not path or path == ":memory:":
        return None
    return Path(path).absolute()


def readonly_uri(path: Path) -> str:
    """A ``file:`` URI opening ``path`` read-only: ``mode=ro``, or ``immutable=1`` when the
    directory is read-only and SQLite could not create the ``-wal``/``-shm`` files it reads with."""
    if not path.is_file():
        blocker = file_in_the_way(path.parent)
        if blocker is not None:  # the data folder named is a file: say so, not "no database"
            raise NoDatabaseError(
                f"there is no database at {path}: {blocker} is a file, not a folder ({how_chosen()}); "
                f"set ARENA_HOME to your data folder (or ARENA_DATABASE_URL to a database URL)"
            )
        raise NoDatabaseError(
            f"there is no database at {path} ({how_chosen()}); this command only reads, so it did "
            f"not create one. Set ARENA_HOME to your data directory (or ARENA_DATABASE_URL to a "
            f"database URL); a command that writes (e.g. 'arena bots add') creates it."
        )
    uri = f"file:{quote(str(path))}?mode=ro"
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if os.access(path.parent, os.W_OK) or (wal.exists() and shm.exists()):
        return uri
    if wal.exists() and wal.stat().st_size > 0:
        raise DatabaseReadOnlyError(
            f"the database {path} has recent changes in {wal.name} that SQLite can only read with "
            f"{shm.name}, which it cannot create in the read-only directory {path.parent}. Open it "
            f"once with write access (e.g. 'arena db upgrade') to fold them in, or copy the folder "
            f"somewhere writable."
        )
    return uri + "&immutable=1"


_REVISION_LINE = re.compile(r"""^(down_revision|revision)\s*(?::[^=]*)?=\s*(None|"[^"]*"|'[^']*')""", re.M)


def bundled_revisions() -> tuple[str, set[str]]:
    """The newest bundled schema revision and every bundled one, read from the migration files'
    ``revision`` / ``down_revision`` lines (what Alembic reads, without importing Alembic: a
    command that only opens the database stays fast)."""
    parent: dict[str, str | None] = {}
    for path in sorted((MIGRATIONS / "versions").glob("[0-9]*.py")):
        found = {k: None if v == "None" else v[1:-1] for k, v in _REVISION_LINE.findall(path.read_text())}
        if "revision" in found and found["revision"] is not None:
            parent[found["revision"]] = found.get("down_revision")
    heads = set(parent) - {p for p in parent.values() if p is not None}
    if len(heads) != 1:
        raise StoreError(f"the bundled migrations in {MIGRATIONS} have {len(heads)} heads: {sorted(heads)}")
    return heads.pop(), set(parent)
