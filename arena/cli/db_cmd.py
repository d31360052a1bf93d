"""``arena db``: check the database for damage, back it up online, upgrade its schema."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text
from sqlalchemy import make_url

from arena.store.db import Database, StoreError, database_url, describe, how_chosen, sqlite_path
from arena.store.health import backup, check_integrity
from arena.termui import StatusLine, make_console
from arena.web.queries import MatchFilters
from arena.web.replays import Verdict, verify_stored

from .common import database, fail

app = typer.Typer(help="Check, back up and upgrade the database.", no_args_is_help=True)

SHOWN_PROBLEMS = 20


def _restore_advice(where: str, is_sqlite: bool) -> str:
    if is_sqlite:
        return (
            f"Restore a backup made with 'arena db backup FILE': stop every arena command using the "
            f"database, copy the backup over {where} and delete {where}-wal and {where}-shm"
        )
    return "Restore your pg_dump backup (pg_restore), or re-run the damaged matches' tournaments"


@app.command()
def check(
    quick: Annotated[
        bool,
        typer.Option("--quick", help="SQLite: quick_check (pages and b-trees) instead of integrity_check"),
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="also list the good replays")] = False,
) -> None:
    """Check the database for damage: SQLite's page checks (integrity_check), then every stored
    replay re-simulated through the engine, naming each damaged one.  Reads only.

    Exit status 0 when all is well, 1 when anything is damaged."""
    url = database_url()
    where, path = describe(url), sqlite_path(url)
    console = make_console()
    typer.echo(f"database {where} ({how_chosen()})")
    damaged: list[str] = []
    if path is not None:
        try:
            report = check_integrity(path, quick=quick)
        except StoreError as exc:  # none there, or unreadable for another reason than damage
            raise fail(str(exc)) from None
        if report.note:
            typer.echo(report.note)
        if report.ok:
            console.print(Text(f"{report.pragma}: ok ({report.seconds:.2f} s)", style="green"))
        else:
            n = len(report.problems)
            console.print(Text(f"{report.pragma}: {n} problem{'s' if n != 1 else ''}:", style="red"))
            for line in report.problems[:SHOWN_PROBLEMS]:
                console.print(Text(f"  {line}", style="red"), soft_wrap=True)
            if n > SHOWN_PROBLEMS:
                console.print(Text(f"  ... and {n - SHOWN_PROBLEMS} more", style="red"))
            damaged.append(f"{report.pragma} found {n} problem{'s' if n != 1 else ''}")
    else:
        typer.echo("PostgreSQL checks its own pages (see its amcheck extension); checking every replay")
    verdicts: list[Verdict] = []
    try:
        db = Database(url, readonly=True)
    except StoreError as exc:
        console.print(Text(f"FAIL the database cannot be opened: {exc}", style="red"), soft_wrap=True)
        damaged.append("it cannot be opened")
    else:
        status = StatusLine(quiet=not sys.stderr.isatty())  # a terminal sees the count go up
        shown = time.monotonic()
        try:
            for v in verify_stored(db, MatchFilters()):
                verdicts.append(v)
                if verbose or not v.ok:
                    status.close()
                    console.print(Text(v.message(), style="green" if v.ok else "red"), soft_wrap=True)
                if time.monotonic() - shown > 0.5:
                    shown = time.monotonic()
                    status.write(f"checking replays: {len(verdicts)} so far ({v.label})")
        finally:
            status.close()
            db.close()
        bad = [v.label for v in verdicts if not v.ok]
        summary = f"replays: {len(verdicts)} checked, {len(verdicts) - len(bad)} OK"
        if bad:
            summary += f", {len(bad)} damaged: {', '.join(bad)}"
            damaged.append(f"{len(bad)} replay{'s are' if len(bad) != 1 else ' is'} damaged")
        console.print(Text(summary, style="red bold" if bad else "green bold"), soft_wrap=True)
    if damaged:
        advice = _restore_advice(where, path is not None)
        raise fail(f"the database {where} is damaged ({'; '.join(damaged)}). {advice}.")
    typer.echo("no damage found")


@app.command("backup")
def backup_(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="where to write the copy (a new file)")],
    force: Annotated[bool, typer.Option("--force", help="replace FILE if it exists")] = False,
) -> None:
    """Copy a SQLite database to FILE while it is in use (SQLite's online backup: one consistent
    snapshot, even while a tournament writes).  For PostgreSQL it prints the pg_dump command and
    exits 2."""
    url = database_url()
    path = sqlite_path(url)
    if path is None:
        pg = make_url(url).set(drivername="postgresql", password=None).render_as_string()
        typer.echo(
            f"error: 'arena db backup' copies SQLite databases; {describe(url)} is PostgreSQL. Back it up "
            f"with pg_dump (the password comes from PGPASSWORD or ~/.pgpass):\n"
            f"  pg_dump --format=custom --file {file} '{pg}'\n"
            f"and restore it with: pg_restore --clean --dbname '{pg}' {file}",
            err=True,
        )
        raise typer.Exit(2)
    if not path.is_file():
        raise fail(f"there is no database at {path} to back up ({how_chosen()})")
    try:
        done = backup(path, file, force=force)
    except StoreError as exc:
        raise fail(str(exc), 1) from None
    holds = ""
    if done.matches is not None and done.replays is not None:
        holds = f", {done.matches} matches, {done.replays} replays"
    typer.echo(
        f"backed up {path} to {done.dest} ({done.bytes} bytes{holds}; quick_check ok) in {done.seconds:.2f} s"
    )


@app.command()
def upgrade() -> None:
    """Create the database, or upgrade its schema to this Pool Arena's (every row is kept)."""
    with database() as db:
        typer.echo(f"database {db.where}: schema revision {db.revision} (current)")
