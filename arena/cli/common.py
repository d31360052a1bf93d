"""Helpers shared by the CLI sub-apps: opening the database, turning errors into messages.

This is the one place where the CLI turns expected errors into ``error: ...`` and exit 1: inside
``with database() as db``, and (through :func:`escaped`, called by the top-level command group)
for a store error escaping any command, e.g. from a database opened mid-command.  A "not found"
message also names the database it looked in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from arena.sandbox import BotLaunchError, SandboxUnavailableError
from arena.store.errors import StoreError, UnknownBotError
from arena.store.location import database_url, how_chosen

if TYPE_CHECKING:
    from arena.store.db import Database

EXPECTED_ERRORS = (StoreError, BotLaunchError, SandboxUnavailableError, ValueError)  # + RatingError


def expected_errors() -> tuple[type[Exception], ...]:
    """:data:`EXPECTED_ERRORS` and the ratings' errors (imported only when needed: the ratings
    package loads numpy, which would slow every command's start)."""
    from arena.ratings.errors import RatingError

    return (*EXPECTED_ERRORS, RatingError)


MAX_JOBS = 1024
"""The most --jobs (or --local-cluster, --nworkers): beyond 2**31 the worker pool's semaphore
ended a run in an OverflowError traceback."""

FORFEIT_EXIT = 3
"""Exit status of a command that played its games but a bot forfeited one (``arena match``,
``arena play``, ``arena evaluate``): a script can tell a broken bot from a lost game."""


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def cannot_listen(host: str, port: int, exc: OSError) -> str:
    """The message for a web server that could not listen on ``host:port``: what to change
    (``--host`` for an address this machine does not have, ``--port`` for a port in use or
    reserved)."""
    import errno
    import socket

    why = exc.strerror or str(exc)
    addresses = "one of its addresses (127.0.0.1 for this machine only, 0.0.0.0 for every interface)"
    if isinstance(exc, socket.gaierror):
        hint = f"that --host is no address and no name this machine can resolve: give {addresses}"
    elif exc.errno == errno.EADDRNOTAVAIL:
        hint = f"no interface of this machine has that address: give --host {addresses}"
    elif exc.errno == errno.EACCES:
        hint = "ports below 1024 need privileges: try a --port above 1023"
    elif exc.errno == errno.EADDRINUSE:
        hint = "another program uses that port: try another --port (0 picks a free one)"
    else:
        hint = "check --host and --port"
    return f"cannot listen on {host}:{port}: {why}; {hint}"


def _not_found(exc: Exception) -> bool:
    from arena.store.tournaments import UnknownMatchError, UnknownTournamentError

    if isinstance(exc, (UnknownTournamentError, UnknownMatchError, UnknownBotError)):
        return True
    from arena.web.queries import FilterError  # an unknown --bot filter is a lookup that failed too

    return isinstance(exc, FilterError) and str(exc).startswith("no bot ")


DAMAGED_ADVICE = (
    "; 'arena db check' checks every stored replay and says how to restore a backup "
    "(the other matches are unaffected)"
)
"""What to do about a damaged stored replay, appended to the message that says what is wrong."""


def explain(exc: Exception, where: str | None = None) -> str:
    """The message for an expected error; a "not found" one says which database was searched
    (and, when no environment variable chose it, how it was chosen), a damaged replay what to do."""
    from arena.store.tournaments import CorruptReplayError

    message = str(exc)
    if isinstance(exc, CorruptReplayError):
        message += DAMAGED_ADVICE
    if where is not None and _not_found(exc) and "in the database " not in message:  # said once
        by_env = os.environ.get("ARENA_DATABASE_URL") or os.environ.get("ARENA_HOME")
        chosen = "" if by_env else f"; {how_chosen()}"
        message += f" (looked in the database {where}{chosen})"
    return message


def missing_sqlite_file() -> Path | None:
    """The SQLite file the chosen database would be, when it does not exist yet (None: it exists,
    or the database is not a SQLite file)."""
    from arena.store.db import sqlite_path  # the command opens the database next anyway

    path = sqlite_path(database_url())
    return path if path is not None and not path.exists() else None


def refuse_unknown_bots(refs: list[str]) -> None:
    """Before a write command creates a new database: exit 2 when a bot it names is no bot (with
    no database there are no registered bots), so that a mistyped name in the wrong folder does
    not leave an empty database behind.  Does nothing when the database exists."""
    missing = missing_sqlite_file()
    if missing is None:
        return
    from arena.botref import BotRefError, resolve

    no_db = (
        f"not a registered bot (there is no database at {missing} yet, so no bot is registered: "
        f"{how_chosen()})"
    )
    try:
        for ref in refs:
            resolve(ref, None, no_db=no_db)
    except BotRefError as exc:
        raise fail(str(exc), 2) from None


@contextmanager
def database(*, readonly: bool = False, existing: bool = False) -> Iterator[Database]:
    """Open the database; expected errors become a clear message and exit 1 (2 for a bot named
    on the command line that is no bot: a usage error, as in ``arena match``).

    ``readonly=True`` is for commands that only read: nothing is created, written or migrated
    (see :class:`arena.store.db.Database`), so they also work on a read-only data directory.
    Otherwise the database is created or upgraded, and a damaged SQLite file is refused;
    ``existing=True`` (a command about something stored, e.g. a tournament to resume) refuses a
    missing SQLite file (exit 1, saying where it looked) instead of creating an empty one."""
    from arena.store.db import Database  # the ORM loads only for commands that open the database

    missing = missing_sqlite_file() if existing and not readonly else None
    if missing is not None:
        raise fail(
            f"there is no database at {missing} ({how_chosen()}); this command works on what is "
            f"stored there, so it did not create an empty one. Set ARENA_HOME to your data directory "
            f"(or ARENA_DATABASE_URL to a database URL)."
        )

    try:
        db = Database(readonly=readonly)
    except StoreError as exc:
        raise fail(str(exc)) from None
    try:
        yield db
    except Exception as exc:
        if not isinstance(exc, expected_errors()):
            raise
        from arena.botref import BotRefError  # a bot named on the command line names nothing: usage

        raise fail(explain(exc, db.where), 2 if isinstance(exc, BotRefError) else 1) from None
    finally:
        db.close()


def escaped(exc: BaseException) -> typer.Exit | None:
    """For the top-level command group: a store error that escaped a command (a database opened
    mid-command, outside :func:`database`), or the database's disk being full, becomes the same
    one-line message, and the Exit to raise is returned; anything else is not ours (None: let it
    through)."""
    if isinstance(exc, StoreError):
        from arena.store.db import describe

        try:
            where: str | None = describe(database_url())
        except StoreError:  # the database has no URL (a data directory not named in UTF-8)
            where = None
        return fail(explain(exc, where))
    if "sqlalchemy" in sys.modules:  # else no database was used
        from sqlalchemy.exc import DBAPIError

        from arena.store.db import classify, describe

        if isinstance(exc, DBAPIError) and exc.orig is not None and classify(exc.orig) == "full":
            return fail(
                f"the database {describe(database_url())} could not be written: {exc.orig}; free some "
                f"space on its disk and run the command again"
            )
    return None


DEFAULT_LOGS_ADVICE = (
    "it is the logs folder under ARENA_HOME: give another with --logs DIR, or another ARENA_HOME"
)
"""What to do about an unusable logs folder that the user did not name (the default)."""


def refuse_path(path: Path, problem: str | None, advice: str = "give another path") -> None:
    """Exit 2 (a usage error, before anything is done) when ``problem`` says ``path`` is unusable;
    ``advice`` says what to do (a default path the user never gave needs other advice)."""
    if problem is not None:
        typer.echo(f"error: cannot write {path}: {problem}; {advice}", err=True)
        raise typer.Exit(2)


def web_environment() -> None:
    """Refuse (exit 2, saying what is wrong) a bad ``ARENA_WEB_CONNECTIONS_PER_ADDRESS`` before a
    web server starts (:mod:`arena.web.connguard`)."""
    from arena.web.connguard import per_address_limit

    try:
        per_address_limit()
    except ValueError as exc:
        raise fail(str(exc), 2) from None


def refuse_clock_with_unlimited(ctx: typer.Context, unlimited: bool) -> None:
    """Bad usage: ``--unlimited`` with ``--move-time`` or ``--bank`` given on the command line
    (options that do not go together: the clock given was silently dropped)."""
    if not unlimited:
        return
    given = []
    for option in ("move_time", "bank"):
        source = ctx.get_parameter_source(option)  # (typer's own click: compared by name)
        if source is not None and source.name == "COMMANDLINE":
            given.append("--" + option.replace("_", "-"))
    if given:
        raise typer.BadParameter(
            f"--unlimited plays without a clock: leave out {' and '.join(given)}, or --unlimited",
            param_hint="--unlimited",
        )
