"""A SQLite database file's health: SQLite's own page checks, and online backups.

Both work on the file directly with the standard ``sqlite3`` module, opened read-only (see
:func:`arena.store.db.readonly_uri`), so they run on a damaged file that :class:`Database` would
refuse and in a read-only data directory.  (Verifying the stored replays is
:func:`arena.web.replays.verify_stored`, for every backend.)
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from .db import DatabaseDamagedError, StoreError, classify, readonly_uri, summarize_problems

PAGE = re.compile(r"\b(?:[Tt]ree|[Pp]age) (\d+)\b")  # "Tree 27", "tree page 44", "Page 47"


class BackupError(StoreError):
    """A backup that could not be written (the destination exists, is not writable, ...)."""


@dataclass(frozen=True)
class IntegrityReport:
    """What ``PRAGMA integrity_check`` (or ``quick_check``) said: ``problems`` is empty when ok."""

    pragma: str
    problems: list[str]
    seconds: float
    note: str = ""  # how the check went when SQLite stopped at damage

    @property
    def ok(self) -> bool:
        """Whether SQLite found nothing wrong."""
        return not self.problems


_INTERIOR = (0x02, 0x05)  # b-tree page types: interior index, interior table (SQLite file format §1.6)
_LEAF = (0x0A, 0x0D)


def _tree_pages(path: Path, root: int, limit: int = 1 << 20) -> list[int]:
    """The interior and leaf pages of the b-tree rooted at ``root``, read from the file itself
    (not through SQLite, which stops at the first damage it meets: its ``dbstat`` decodes a
    leaf's overflow chains before it lists the leaf).  Best effort: pages it cannot read or that
    are no b-tree page are skipped; pages only in the ``-wal`` file are not seen."""
    try:
        with path.open("rb") as fh:
            data = fh.read()
    except OSError:
        return []
    if len(data) < 100:
        return []
    size = int.from_bytes(data[16:18], "big")
    size = 65536 if size == 1 else size
    if size < 512:
        return []
    count = len(data) // size
    seen: set[int] = set()
    todo, out = [root], []
    while todo and len(seen) < limit:
        page = todo.pop()
        if not 1 <= page <= count or page in seen:
            continue
        seen.add(page)
        base = (page - 1) * size
        head = base + (100 if page == 1 else 0)
        kind = data[head]
        if kind in _LEAF:
            out.append(page)
        elif kind in _INTERIOR:
            out.append(page)
            cells = int.from_bytes(data[head + 3 : head + 5], "big")
            todo.append(int.from_bytes(data[head + 8 : head + 12], "big"))  # the right-most child
            for k in range(min(cells, size // 2)):
                at = head + 12 + 2 * k
                pointer = int.from_bytes(data[at : at + 2], "big")
                if 0 < pointer <= size - 4:
                    todo.append(int.from_bytes(data[base + pointer : base + pointer + 4], "big"))
    return out


def _page_owners(conn: sqlite3.Connection, path: Path | None = None) -> dict[int, str]:
    """Page -> ``table NAME`` / ``index NAME`` as far as can still be told: the root pages from
    the schema, every page SQLite's ``dbstat`` table lists (read until it meets the damage), and
    the b-tree pages under each root read from the file ``path`` itself; empty when the schema
    itself cannot be read."""
    try:
        rows = conn.execute("SELECT type, name, rootpage FROM sqlite_master WHERE rootpage > 0").fetchall()
    except sqlite3.DatabaseError:
        return {}
    kinds = {str(name): str(kind) for kind, name, _root in rows}
    owners = {int(root): f"{kind} {name}" for kind, name, root in rows}
    for name, kind in kinds.items():
        try:
            cursor = conn.execute("SELECT pageno FROM dbstat WHERE name = ?", (name,))
            for (page,) in cursor:
                owners.setdefault(int(page), f"{kind} {name}")
        except sqlite3.Error:  # damage met (or no dbstat in this SQLite): keep what was read
            continue
    if path is not None:
        for kind, name, root in rows:
            for page in _tree_pages(path, int(root)):
                owners.setdefault(page, f"{kind} {name}")
    return owners


def _table_by_table(conn: sqlite3.Connection, pragma: str) -> list[str]:
    """The check table by table, after the whole-file check stopped at damage: a table whose
    b-tree SQLite cannot even walk is named with the error."""
    try:
        tables = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError as exc:
        return [f"the file cannot be read as a database at all: {exc}"]
    rows = []
    for table in tables:
        quoted = table.replace('"', '""')
        try:
            found = [str(r[0]) for r in conn.execute(f'PRAGMA {pragma}("{quoted}")')]
        except sqlite3.DatabaseError as exc:
            found = [f"table {table}: its pages cannot be read ({exc})"]
        rows += [
            f"table {table}: {line}" if not line.startswith("table ") else line
            for line in found
            if line != "ok"
        ]
    return rows


def check_integrity(path: Path, *, quick: bool = False, limit: int = 100) -> IntegrityReport:
    """Run SQLite's page checks on ``path`` (read-only): every page, index and constraint with
    ``integrity_check``; pages and b-trees only (faster) with ``quick``.  A page named in a
    problem ("Tree 27", "tree page 44") gets its table's or index's name where SQLite can tell.
    A file SQLite cannot read at all is one problem saying so."""
    pragma = "quick_check" if quick else "integrity_check"
    started = time.perf_counter()
    note = ""
    conn = sqlite3.connect(readonly_uri(path), uri=True, timeout=60)
    try:
        try:
            rows = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}({limit})")]
        except sqlite3.DatabaseError as exc:
            if classify(exc) != "damaged":
                raise
            rows = _table_by_table(conn, pragma)  # SQLite gave up: find which tables it was
            note = f"{pragma} stopped at damage ({exc}); checked table by table"
        owners = _page_owners(conn, path) if rows != ["ok"] else {}
    finally:
        conn.close()
    lines = [line.strip() for row in rows for line in row.splitlines()]
    problems = [line for line in lines if line and line != "ok" and not line.startswith("***")]

    def named(line: str) -> str:
        return PAGE.sub(
            lambda m: (
                f"{m.group(0)} ({owners[int(m.group(1))]})" if int(m.group(1)) in owners else m.group(0)
            ),
            line,
        )

    return IntegrityReport(pragma, [named(p) for p in problems], time.perf_counter() - started, note)


@dataclass(frozen=True)
class BackupResult:
    """A finished backup: where, how big, how long, and what it holds."""

    dest: Path
    bytes: int
    seconds: float
    matches: int | None
    replays: int | None


def _count(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
    except sqlite3.DatabaseError:
        return None


def backup(path: Path, dest: Path, *, force: bool = False) -> BackupResult:
    """Copy the SQLite database ``path`` to ``dest`` online, with SQLite's backup API.

    The copy is one read transaction (a consistent snapshot even while a tournament writes: in WAL
    mode writers go on meanwhile), written to a temporary file beside ``dest``, switched to a
    self-contained rollback journal, checked with ``quick_check`` and only then renamed to
    ``dest``.  :class:`BackupError` when ``dest`` exists (unless ``force``) or cannot be written;
    :class:`DatabaseDamagedError` (and no ``dest``) when the database is damaged."""
    dest = dest.absolute()
    if dest == path or (dest.exists() and path.exists() and dest.samefile(path)):
        raise BackupError(f"{dest} is the database itself; give another FILE")
    if dest.is_dir():
        raise BackupError(f"{dest} is a directory; give a FILE name, e.g. {dest / 'arena-backup.db'}")
    if dest.exists() and not force:
        raise BackupError(f"{dest} exists; give another FILE or add --force to replace it")
    if not dest.parent.is_dir():
        raise BackupError(f"cannot write {dest}: the folder {dest.parent} does not exist")
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    started = time.perf_counter()
    src = sqlite3.connect(readonly_uri(path), uri=True, timeout=60)
    try:
        try:
            dst = sqlite3.connect(partial)
        except sqlite3.Error as exc:
            raise BackupError(f"cannot write {dest}: {exc}") from None
        try:
            src.backup(dst)  # every page in one step: one snapshot of the source
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
            rows = [str(r[0]) for r in dst.execute("PRAGMA quick_check(5)")]
            if rows != ["ok"]:
                raise DatabaseDamagedError(
                    str(path),
                    "its copy fails quick_check: " + summarize_problems(rows) + "; no backup written",
                )
            matches, replays = _count(dst, "match"), _count(dst, "replay")
        except sqlite3.Error as exc:
            if classify(exc) == "damaged":
                raise DatabaseDamagedError(str(path), f"{exc}; no backup written") from None
            raise BackupError(f"cannot back up {path} to {dest}: {exc}") from None
        finally:
            dst.close()
        with partial.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(partial, dest)
    finally:
        src.close()
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return BackupResult(dest, dest.stat().st_size, time.perf_counter() - started, matches, replays)
