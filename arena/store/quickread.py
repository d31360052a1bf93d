"""Read-only listings answered with the standard library's ``sqlite3``, without loading the ORM.

``arena bots list`` is the first command a newcomer runs, and importing SQLModel/SQLAlchemy alone
takes longer than the whole command should (0.3 s).  For the common case — the default SQLite
file, at the schema revision this Pool Arena bundles — the listing is one SQL query that needs
nothing but ``sqlite3``.

Contract: :func:`bot_rows_fast` returns exactly the rows the ORM path
(:func:`arena.store.bots.list_bots` turned into :class:`BotRow` by :meth:`BotRow.from_info`)
returns, or ``None`` whenever it cannot be sure to: another database (PostgreSQL), a URL with
options, a missing or damaged file, an older or newer schema, a busy or unreadable file.  The
caller then takes the ORM path, which gives the precise message for every one of those cases.
A test checks both paths agree on the same database.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .botnames import FILE_PREFIX, HUMAN_PREFIX
from .errors import StoreError
from .location import bundled_revisions, database_url, plain_sqlite_path, readonly_uri

if TYPE_CHECKING:
    from .bots import BotInfo

BUSY_TIMEOUT_S = 2.0  # a reader in WAL mode is not blocked by writers; this only covers a checkpoint


@dataclass(frozen=True)
class BotRow:
    """One line of ``arena bots list``: a bot and its latest version."""

    name: str
    version: int
    versions: int
    filename: str
    sha256: str
    matches: int
    created_at: datetime
    removed: bool
    persistent: bool

    @classmethod
    def from_info(cls, info: BotInfo) -> BotRow:
        """The row of an ORM :class:`~arena.store.bots.BotInfo`."""
        return cls(
            name=info.bot.name,
            version=info.latest.version,
            versions=info.versions,
            filename=info.latest.filename,
            sha256=info.latest.sha256,
            matches=info.matches,
            created_at=info.latest.created_at,
            removed=info.bot.removed_at is not None,
            persistent=info.latest.persistent,
        )


_LIST_BOTS = """
SELECT b.name, v.version, v.filename, v.sha256, v.persistent, v.created_at, b.removed_at,
       (SELECT COUNT(*) FROM botversion AS c WHERE c.bot_id = b.id) AS versions,
       (SELECT COUNT(*) FROM matchseat AS s JOIN botversion AS w ON s.bot_version_id = w.id
         WHERE w.bot_id = b.id) AS matches
FROM bot AS b
JOIN botversion AS v
  ON v.bot_id = b.id AND v.version = (SELECT MAX(m.version) FROM botversion AS m WHERE m.bot_id = b.id)
WHERE b.name NOT LIKE ? AND b.name NOT LIKE ? {removed}
ORDER BY b.name
"""


def _utc(moment: datetime) -> datetime:
    """Stored times are UTC; SQLite keeps them without an offset (the ORM adds it back the same way)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def bot_rows_fast(*, include_removed: bool = False, url: str | None = None) -> list[BotRow] | None:
    """Every registered bot with its latest version, by name — or None when only the ORM path can
    answer (see the module's contract).  ``url`` defaults to :func:`database_url`."""
    path = plain_sqlite_path(url if url is not None else database_url())
    if path is None or not path.is_file():
        return None
    try:
        uri = readonly_uri(path)
    except StoreError:
        return None
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return None
    try:
        head, _known = bundled_revisions()
        (current,) = conn.execute("SELECT version_num FROM alembic_version").fetchone() or (None,)
        if current != head:
            return None
        removed = "" if include_removed else "AND b.removed_at IS NULL"
        hidden = (f"{FILE_PREFIX}%", f"{HUMAN_PREFIX}%")  # bots used by path, and people
        rows = conn.execute(_LIST_BOTS.format(removed=removed), hidden).fetchall()
        return [
            BotRow(
                name=name,
                version=int(version),
                versions=int(versions),
                filename=filename,
                sha256=sha256,
                matches=int(matches),
                created_at=_utc(datetime.fromisoformat(created_at)),
                removed=removed_at is not None,
                persistent=bool(persistent),
            )
            for name, version, filename, sha256, persistent, created_at, removed_at, versions, matches in rows
        ]
    except (sqlite3.Error, StoreError, ValueError, TypeError):
        return None
    finally:
        conn.close()
