"""Opening the database: URL, engine settings, automatic migrations, schema checks, damage.

SQLite (the default, ``<ARENA_HOME>/arena.db``) runs in WAL mode and opens every write
transaction with ``BEGIN IMMEDIATE`` so concurrent writers queue on the busy timeout instead of
failing half-way.  PostgreSQL is used when ``ARENA_DATABASE_URL`` says so
(``postgresql+psycopg://user@host/db``).

Two ways to open it (one class, :class:`Database`):

* for writing (the default): the data directory is created if needed, a SQLite file is checked
  with ``PRAGMA quick_check`` (a damaged file is refused before anything is written to it), and
  the schema is created or upgraded with the bundled Alembic migrations; a database from a newer
  Pool Arena is refused untouched;
* for reading (``readonly=True``): nothing is ever created, written or migrated.  A missing
  database is :class:`NoDatabaseError`; SQLite is opened with ``mode=ro`` (and ``immutable=1``
  when its directory is read-only, so no ``-wal``/``-shm`` file is needed); an older schema is
  :class:`SchemaTooOldError`.

Whatever a command does later, SQLite reporting a damaged file becomes
:class:`DatabaseDamagedError` and a read-only file or directory :class:`DatabaseReadOnlyError`
(translated in one place, the engine's ``handle_error`` hook), each naming the file and what to do.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import ArgumentError, OperationalError, ProgrammingError
from sqlalchemy.pool import QueuePool
from sqlmodel import Session

# Re-exported: the error types and the location helpers live in standard-library-only modules so
# that fast commands can use them without loading SQLAlchemy; existing imports from here still work.
from arena.outpaths import file_in_the_way

from .errors import DatabaseDamagedError as DatabaseDamagedError
from .errors import DatabaseReadOnlyError as DatabaseReadOnlyError
from .errors import DatabaseUnavailableError as DatabaseUnavailableError
from .errors import DatabaseUrlError as DatabaseUrlError
from .errors import ForeignSchemaError as ForeignSchemaError
from .errors import NoDatabaseError as NoDatabaseError
from .errors import NulInTextError as NulInTextError
from .errors import NumberOutOfRangeError as NumberOutOfRangeError
from .errors import SchemaTooNewError as SchemaTooNewError
from .errors import SchemaTooOldError as SchemaTooOldError
from .errors import StoreError as StoreError
from .location import DEFAULT_HOME as DEFAULT_HOME
from .location import MIGRATIONS as MIGRATIONS
from .location import arena_home as arena_home
from .location import bundled_revisions as bundled_revisions
from .location import database_url as database_url
from .location import how_chosen as how_chosen
from .location import readonly_uri as readonly_uri

if TYPE_CHECKING:
    from alembic.config import Config

LOCKED_RETRY_S = 60.0  # how long opening waits for a busy SQLite database (its busy timeout)
MIGRATION_LOCK = 0x506F6F6C41726E61  # PostgreSQL advisory lock key held while migrating ("PoolArna")
SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_FULL = 11, 26, 8, 14, 13
PG_DAMAGE_STATES = ("XX001", "XX002")  # data_corrupted, index_corrupted
PG_DISK_FULL = "53100"
PG_READ_ONLY_TRANSACTION = "25006"  # a write in a read-only open (default_transaction_read_only)
PG_OUT_OF_RANGE = "22003"  # numeric_value_out_of_range: e.g. an id over 2**31 - 1 for an INTEGER column
INTEGER_MAX = 2**31 - 1  # PostgreSQL's INTEGER (ids, counts); SQLite's integers are 64-bit
SQLITE_INTEGER_MAX = 2**63 - 1
READ_COMMANDS = "tournament list/show, leaderboard, replays, bots list/show, web, db check"


def sqlite_path(url: str) -> Path | None:
    """The absolute file of a SQLite URL; None for another database or an in-memory one
    (:class:`DatabaseUrlError` for a URL this arena does not open)."""
    check_url(url)
    u = make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    return Path(u.database).absolute()


def describe(url: str) -> str:
    """How messages name a database: a SQLite file's absolute path, else the URL without password."""
    path = sqlite_path(url)
    return str(path) if path is not None else make_url(url).render_as_string(hide_password=True)


def _why_not_writable(path: Path) -> str:
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "a read-only file system"
    except OSError:
        pass
    return f"no write permission for this user (uid {os.geteuid()})"


def _read_only_message(path: Path, what: Path) -> str:
    kind = "data directory" if what.is_dir() else "database file"
    return (
        f"the {kind} {what} is read-only ({_why_not_writable(what)}), so the database {path} cannot "
        f"be written (SQLite also writes {path.name}-wal and {path.name}-shm beside it). Make it "
        f"writable, or copy the data directory somewhere writable and point ARENA_HOME there; "
        f"commands that only read ({READ_COMMANDS}) work on it as it is."
    )


def _read_only_cause(path: Path) -> str | None:
    """Why SQLite cannot write ``path`` (a read-only directory or file), or None when it could."""
    folder = path.parent
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return _read_only_message(path, folder)
    if path.exists() and not os.access(path, os.W_OK):
        return _read_only_message(path, path)
    return None


def _prepare_for_writing(path: Path) -> None:
    """Create the database's directory; :class:`DatabaseReadOnlyError` when it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        folder = path.parent
        blocker = file_in_the_way(folder)
        if blocker is not None:  # not a permission problem: a file where a folder must be
            raise DatabaseUnavailableError(
                f"cannot create the data directory {folder} for the database {path}: {blocker} is "
                f"a file, not a folder ({how_chosen()}); set ARENA_HOME to your data folder (or "
                f"ARENA_DATABASE_URL to a database URL)"
            ) from None
        blocked = next((p for p in path.parent.parents if p.is_dir()), Path("/"))
        raise DatabaseReadOnlyError(
            f"cannot create the data directory {path.parent} for the database {path}: "
            f"{exc.strerror} ({blocked} is {_why_not_writable(blocked)}). Point ARENA_HOME at a "
            f"writable folder, or ARENA_DATABASE_URL at a database."
        ) from None
    cause = _read_only_cause(path)
    if cause is not None:
        raise DatabaseReadOnlyError(cause)


def classify(exc: BaseException) -> str | None:
    """``"damaged"``, ``"read-only"``, ``"cannot-open"``, ``"full"`` (its disk), ``"out-of-range"``
    (a number beyond an integer column), ``"nul"`` (text with a NUL, which psycopg refuses before
    sending it) for the driver errors that mean so; else None."""
    if isinstance(exc, OverflowError) and "SQLite INTEGER" in str(exc):  # raised before SQLite runs
        return "out-of-range"
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        text = str(exc)
        if primary in (SQLITE_CORRUPT, SQLITE_NOTADB) or "malformed" in text or "not a database" in text:
            return "damaged"
        if primary == SQLITE_READONLY:
            return "read-only"
        if primary == SQLITE_CANTOPEN:
            return "cannot-open"
        if primary == SQLITE_FULL:
            return "full"
        return None
    if type(exc).__module__.startswith("psycopg") and "cannot contain NUL" in str(exc):
        return "nul"
    state = getattr(exc, "sqlstate", None)
    if state in PG_DAMAGE_STATES:
        return "damaged"
    if state == PG_READ_ONLY_TRANSACTION:
        return "read-only"
    if state == PG_DISK_FULL:
        return "full"
    if state == PG_OUT_OF_RANGE:
        return "out-of-range"
    return None


def _out_of_range(
    where: str, exc: BaseException, parameters: object, *, limit: int = INTEGER_MAX
) -> NumberOutOfRangeError:
    """The error for a number beyond the database's integers (``limit``: PostgreSQL's INTEGER, or
    SQLite's 64 bits), naming the numbers of ``parameters`` (the statement's: a dict, a tuple, or
    a list of them) that are beyond it, when there are."""
    rows = parameters if isinstance(parameters, list) else [parameters]
    values = [
        v
        for row in rows
        for v in (row.values() if isinstance(row, dict) else row if isinstance(row, tuple) else ())
    ]
    big = sorted({v for v in values if isinstance(v, int) and not isinstance(v, bool) and abs(v) > limit})
    what = " and ".join(str(v) for v in big) if big else "a number given"
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return NumberOutOfRangeError(
        f"{what} is out of range in the database {where} ({detail}): its ids and counts go up to "
        f"{limit:,}, so nothing stored has that number, and nothing was written"
    )


def translate(exc: BaseException, url: str, parameters: object = None) -> StoreError | None:
    """The store error a driver error means (damage, read-only, a number out of range: the
    numbers named are those of ``parameters`` beyond it), or None to let it through."""
    kind = classify(exc)
    if kind is None:
        return None
    where = describe(url)
    if kind == "out-of-range":
        sqlite = isinstance(exc, OverflowError)
        return _out_of_range(where, exc, parameters, limit=SQLITE_INTEGER_MAX if sqlite else INTEGER_MAX)
    if kind == "nul":
        return NulInTextError(
            f"text given to the database {where} holds a NUL character (\\x00), which PostgreSQL's "
            f"text cannot hold: nothing stored has it, and nothing was written"
        )
    path = sqlite_path(url)
    if kind == "damaged":
        return DatabaseDamagedError(where, str(exc).strip().splitlines()[0], sqlite=path is not None)
    cause = _read_only_cause(path) if path is not None else None
    if cause is not None:
        return DatabaseReadOnlyError(cause)
    if kind == "read-only":
        return DatabaseReadOnlyError(
            f"the database {where} was opened read-only, yet this command tried to write to it "
            f"({exc}); use a command that writes, with write access"
        )
    return None


def _on_error(url: str) -> Any:
    def handle(ctx: ExceptionContext) -> None:
        if ctx.is_pre_ping:
            # Any error of the pool's ping means that pooled connection is unusable: a new one is
            # made (a failed reconnect then says what is wrong).  The driver does not always say
            # "disconnect": a server that dropped the connection while the ping's query was on its
            # way gave psycopg's ProgrammingError "can't change 'autocommit' now", raised by
            # SQLAlchemy's ping restoring autocommit, and the session failed.
            ctx.is_disconnect = True
            return
        error = translate(ctx.original_exception, url, ctx.parameters)
        if error is not None:
            raise error

    return handle


def _sqlite_engine(url: str, readonly: bool) -> Engine:
    path = sqlite_path(url)
    if readonly and path is not None:
        uri = readonly_uri(path)
        engine = create_engine(
            "sqlite://",
            creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=60),
            poolclass=QueuePool,
        )
    else:
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        if readonly:
            cur.execute("PRAGMA query_only=ON")
        else:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")

    return engine


DRIVERS = ("sqlite", "sqlite+pysqlite", "postgresql+psycopg")
"""The database URL schemes this arena opens (SQLite, and PostgreSQL with the psycopg driver it
installs)."""

URL_FORMS = "sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE"


def check_url(url: str) -> None:
    """:class:`DatabaseUrlError` unless ``url`` is a database URL of :data:`DRIVERS` (an
    unparseable URL, an unknown dialect or a driver that is not installed ended every command
    in a traceback)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        shown = url.rsplit("@", 1)[-1] if "@" in url else url  # never echo a password (nor one with an @)
        raise DatabaseUrlError(
            f"{shown!r} is not a database URL ({exc}; {how_chosen()}): give {URL_FORMS}"
        ) from None
    if parsed.drivername not in DRIVERS:
        hint = ""
        if parsed.drivername.startswith("postgres"):
            hint = " (for PostgreSQL write postgresql+psycopg://: psycopg is the driver installed)"
        raise DatabaseUrlError(
            f"the database URL {parsed.render_as_string(hide_password=True)} names "
            f"{parsed.drivername!r}, which Pool Arena does not open{hint}; give {URL_FORMS} "
            f"({how_chosen()})"
        )


def make_engine(url: str | None = None, *, readonly: bool = False) -> Engine:
    """An engine for ``url`` (default :func:`database_url`) with the settings above; driver errors
    meaning damage or a read-only file come out as :class:`DatabaseDamagedError` /
    :class:`DatabaseReadOnlyError`, a URL this arena does not open as :class:`DatabaseUrlError`."""
    url = url or database_url()
    check_url(url)
    if url.startswith("sqlite"):
        engine = _sqlite_engine(url, readonly)
    elif readonly:
        engine = create_engine(
            url, pool_pre_ping=True, connect_args={"options": "-c default_transaction_read_only=on"}
        )
    else:
        engine = create_engine(url, pool_pre_ping=True)
    event.listen(engine, "handle_error", _on_error(url))
    return engine


def _alembic_config(connection: Any) -> Config:
    from alembic.config import Config  # Alembic loads only when a schema must change

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def _current(conn: Connection) -> str | None:
    """The database's schema revision (Alembic's ``alembic_version`` row), None when it has none."""
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("alembic_version"):
        return None
    rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    if len(rows) > 1:
        raise StoreError(f"the database has {len(rows)} schema revisions (expected one): {rows}")
    return str(rows[0][0]) if rows else None


OUR_TABLES = frozenset({"bot", "botversion", "tournament", "match"})
"""Tables every Pool Arena schema has had since its first revision: a database with an Alembic
revision this version does not know is a newer Pool Arena's only when it has them."""


def _too_new(where: str, current: str, head: str, tables: Collection[str]) -> StoreError:
    """The error for an Alembic revision this version does not know: a newer Pool Arena's
    (:class:`SchemaTooNewError`), or another program's (:class:`ForeignSchemaError`: its tables
    lack Pool Arena's; it was called "newer than this Pool Arena knows")."""
    if not set(tables) >= OUR_TABLES:
        shown = _listed(tables)
        return ForeignSchemaError(
            f"the database {where} holds another program's schema (Alembic revision {current!r}; "
            f"tables: {shown or 'none'}), not Pool Arena's: give Pool Arena a database of its own "
            f"(e.g. CREATE DATABASE arena, or another ARENA_HOME). Nothing was changed."
        )
    return SchemaTooNewError(
        f"the database {where} has schema revision "
        f"{current!r}, newer than this Pool Arena knows (up to {head!r}); upgrade Pool Arena "
        f"or point ARENA_DATABASE_URL / ARENA_HOME elsewhere. Nothing was changed."
    )


def migrate(engine: Engine) -> str:
    """Create or upgrade the schema to the newest revision; return it.

    Raises :class:`SchemaTooNewError` (touching nothing) when the database's revision is not one
    this version knows.
    """
    head, known = bundled_revisions()
    where = describe(engine.url.render_as_string(hide_password=False))
    deadline = time.monotonic() + LOCKED_RETRY_S
    while True:
        try:
            with engine.begin() as conn:
                if conn.dialect.name == "postgresql":  # one migrator at a time (SQLite: BEGIN IMMEDIATE)
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
                current = _current(conn)
                if current is not None and current not in known:
                    raise _too_new(where, current, head, _tables(conn))
                if current != head:
                    from alembic import command

                    command.upgrade(_alembic_config(conn), "head")
            break
        except OperationalError as exc:
            # SQLite can answer "database is locked" at once, without its busy wait (e.g. while
            # another process sets up or checkpoints the WAL): a busy database is waited for,
            # like any other writer, not reported as unavailable.
            if "database is locked" in str(exc.orig) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            locked = "database is locked" in str(exc.orig)
            advice = (
                f" (another process held a lock on it for {LOCKED_RETRY_S:.0f} s: a program "
                f"writing to it, or a sqlite3 shell with a transaction open; try again once it is done)"
                if locked
                else ""
            )
            raise DatabaseUnavailableError(f"cannot open the database {where}: {exc.orig}{advice}") from None
        except ProgrammingError as exc:
            # PostgreSQL's answer to a schema it cannot create: a table of another program with a
            # Pool Arena table's name ("relation "bot" already exists", a traceback); SQLite says
            # it with an OperationalError, above.  The migration's transaction rolled back.
            raise DatabaseUnavailableError(
                f"cannot set up the Pool Arena schema in the database {where}: "
                f"{str(exc.orig).strip().splitlines()[0]}. It holds tables of another program: give "
                f"Pool Arena a database of its own (e.g. CREATE DATABASE arena). Nothing was changed."
            ) from None
    return head


def _listed(tables: Collection[str]) -> str:
    """The first five of ``tables`` by name, and how many more."""
    names = sorted(tables)
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _tables(conn: Connection) -> list[str]:
    """The table names of the database ``conn`` is open on."""
    from sqlalchemy import inspect

    return list(inspect(conn).get_table_names())


def _what_is_there(engine: Engine) -> str:
    """``it is empty``, or which tables a database without a Pool Arena schema holds (another
    program's: it was called empty)."""
    try:
        with engine.connect() as conn:
            tables = _tables(conn)
    except OperationalError:
        return "it is empty"
    if not tables:
        return "it is empty"
    return f"it holds other tables: {_listed(tables)}; a database of another program?"


def current_revision(engine: Engine, where: str) -> str:
    """The schema revision of a database opened read-only, which must be this version's newest.

    :class:`NoDatabaseError` for a database without a Pool Arena schema, :class:`SchemaTooNewError`
    / :class:`SchemaTooOldError` for another revision.  Nothing is written."""
    head, known = bundled_revisions()
    try:
        with engine.connect() as conn:
            current = _current(conn)
    except OperationalError as exc:
        raise DatabaseUnavailableError(f"cannot open the database {where}: {exc.orig}") from None
    if current is None:
        raise NoDatabaseError(
            f"the database {where} has no Pool Arena schema ({_what_is_there(engine)}) and this "
            f"command only reads; {how_chosen()}. A command that writes (e.g. 'arena db upgrade') "
            f"creates it."
        )
    if current not in known:
        with engine.connect() as conn:
            raise _too_new(where, current, head, _tables(conn))
    if current != head:
        raise SchemaTooOldError(
            f"the database {where} has schema revision {current!r}, older than this Pool Arena's "
            f"{head!r}, and this command only reads, so it did not upgrade it. Run 'arena db upgrade' "
            f"with write access to the database (it keeps every row), then try again."
        )
    return current


def quick_check(path: Path, limit: int = 5) -> None:
    """``PRAGMA quick_check`` of a SQLite file on a plain read-only connection (nothing is written,
    not even the journal mode): :class:`DatabaseDamagedError` unless it says ``ok``."""
    conn = sqlite3.connect(readonly_uri(path), uri=True, timeout=60)
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({limit})")]
    except sqlite3.Error as exc:
        error = translate(exc, f"sqlite:///{path}")
        if error is None:
            raise DatabaseUnavailableError(f"cannot open the database {path}: {exc}") from None
        raise error from None
    finally:
        conn.close()
    if rows != ["ok"]:
        raise DatabaseDamagedError(str(path), "quick_check: " + summarize_problems(rows, limit))


def summarize_problems(rows: list[str], limit: int = 3) -> str:
    """The problems of ``PRAGMA integrity_check`` / ``quick_check`` on one line (at most ``limit``)."""
    lines = [line.strip() for row in rows for line in row.splitlines()]
    lines = [line for line in lines if line and not line.startswith("***")]
    more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


class Database:
    """An open database: for writing (checked, created and migrated) or, with ``readonly=True``,
    for reading only (never created, written or migrated; see the module's documentation)."""

    def __init__(self, url: str | None = None, *, readonly: bool = False) -> None:
        self.url = url or database_url()
        self.readonly = readonly
        self.where = describe(self.url)
        path = sqlite_path(self.url)
        if path is not None and not readonly:
            _prepare_for_writing(path)
            if path.exists():
                quick_check(path)  # before anything (even the journal mode) is written to it
        self.engine = make_engine(self.url, readonly=readonly)
        try:
            if readonly:
                self.revision = current_revision(self.engine, self.where)
            else:
                self.revision = migrate(self.engine)
        except BaseException:
            self.engine.dispose()
            raise

    @property
    def is_sqlite(self) -> bool:
        """Whether this is a SQLite database (a file)."""
        return self.engine.dialect.name == "sqlite"

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
