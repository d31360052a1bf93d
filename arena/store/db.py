"""Opening the database: URL, engine settings, automatic migrations, schema checks.

SQLite (the default, ``<ARENA_HOME>/arena.db``) runs in WAL mode and opens every write
transaction with ``BEGIN IMMEDIATE`` so concurrent writers queue on the busy timeout instead of
failing half-way.  PostgreSQL is used when ``ARENA_DATABASE_URL`` says so
(``postgresql+psycopg://user@host/db``).  Opening a database creates or upgrades its schema with
the bundled Alembic migrations; a database from a newer Pool Arena is refused untouched.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
MIGRATION_LOCK = 0x506F6F6C41726E61  # PostgreSQL advisory lock key held while migrating ("PoolArna")


class StoreError(Exception):
    """Base class of the store's errors."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer Pool Arena; nothing was changed."""


class DatabaseUnavailableError(StoreError):
    """The database cannot be opened or reached."""


def arena_home() -> Path:
    """The data directory: ``$ARENA_HOME`` or ``./arena-data``."""
    return Path(os.environ.get("ARENA_HOME", "arena-data"))


def database_url() -> str:
    """``$ARENA_DATABASE_URL``, else SQLite at ``<ARENA_HOME>/arena.db``."""
    url = os.environ.get("ARENA_DATABASE_URL")
    if url:
        return url
    home = arena_home()
    home.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{home / 'arena.db'}"


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def make_engine(url: str | None = None) -> Engine:
    """An engine for ``url`` (default :func:`database_url`) with the settings above."""
    url = url or database_url()
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True)


def _alembic_config(connection: Any) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def migrate(engine: Engine) -> str:
    """Create or upgrade the schema to the newest revision; return it.

    Raises :class:`SchemaTooNewError` (touching nothing) when the database's revision is not one
    this version knows.
    """
    script = ScriptDirectory.from_config(_alembic_config(None))
    head = script.get_current_head()
    assert head is not None
    known = {rev.revision for rev in script.walk_revisions()}
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":  # one migrator at a time (SQLite: BEGIN IMMEDIATE)
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            current = MigrationContext.configure(conn).get_current_revision()
            if current is not None and current not in known:
                raise SchemaTooNewError(
                    f"the database {engine.url.render_as_string(hide_password=True)} has schema revision "
                    f"{current!r}, newer than this Pool Arena knows (up to {head!r}); upgrade Pool Arena "
                    f"or point ARENA_DATABASE_URL / ARENA_HOME elsewhere. Nothing was changed."
                )
            if current != head:
                command.upgrade(_alembic_config(conn), "head")
    except OperationalError as exc:
        raise DatabaseUnavailableError(f"cannot open the database: {exc.orig}") from None
    return head


class Database:
    """An open, migrated database."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or database_url()
        self.engine = make_engine(self.url)
        self.revision = migrate(self.engine)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        with Session(self.engine, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()
