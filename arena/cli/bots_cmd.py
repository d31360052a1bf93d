"""``arena bots``: register, list, show and remove bots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from arena.store.bots import add_bot, add_remote_bot, bot_versions, list_bots, remove_bot
from arena.termui import make_console

from .common import database

app = typer.Typer(
    help="Register and manage bots (each upload is an immutable version).", no_args_is_help=True
)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="bot name (letters, digits, _ . -)")],
    path: Annotated[
        Path | None, typer.Argument(help="the bot: a script (shebang or .py/.js/.sh) or an executable")
    ] = None,
    fresh: Annotated[
        bool, typer.Option(help="start it fresh for every match instead of keeping it running")
    ] = False,
    remote: Annotated[
        bool, typer.Option(help="a remote bot that connects in over TCP: issue its token")
    ] = False,
) -> None:
    """Register a bot file (adding the same name again makes a new version), or a remote bot."""
    if remote:
        if path is not None:
            raise typer.BadParameter("a remote bot has no file: give only NAME with --remote")
        with database() as db:
            v, token = add_remote_bot(db, name)
        typer.echo(
            f"added remote bot {name} version {v.version}; its token (shown only once, keep it secret):"
        )
        typer.echo(token)
        return
    if path is None:
        raise typer.BadParameter("give the bot's PATH (or --remote for a bot that connects in)")
    with database() as db:
        v = add_bot(db, name, path, persistent=not fresh)
    typer.echo(f"added {name} version {v.version} (sha256 {v.sha256[:12]}, {v.filename})")


@app.command("list")
def list_(all_: Annotated[bool, typer.Option("--all", help="include removed bots")] = False) -> None:
    """List the registered bots."""
    with database() as db:
        infos = list_bots(db, include_removed=all_)
    if not infos:
        typer.echo("no bots registered; add one with 'arena bots add NAME PATH'")
        return
    table = Table(title="bots")
    for col in ("name", "version", "versions", "file", "sha256", "matches", "added", "status"):
        table.add_column(col)
    for i in infos:
        table.add_row(
            i.bot.name,
            str(i.latest.version),
            str(i.versions),
            i.latest.filename,
            i.latest.sha256[:12],
            str(i.matches),
            i.latest.created_at.strftime("%Y-%m-%d %H:%M"),
            "removed" if i.bot.removed_at else ("kept running" if i.latest.persistent else "fresh per match"),
        )
    make_console().print(table)


@app.command("show")
def show(name: Annotated[str, typer.Argument(help="bot name")]) -> None:
    """Show a bot and all its versions."""
    with database() as db:
        bot, versions = bot_versions(db, name)
    status = f"removed {bot.removed_at:%Y-%m-%d %H:%M}" if bot.removed_at else "active"
    typer.echo(f"{bot.name} ({status}), {len(versions)} version(s)")
    for v in versions:
        typer.echo(
            f"  v{v.version}  {v.created_at:%Y-%m-%d %H:%M}  sha256 {v.sha256}  {v.filename}  "
            f"{'kept running' if v.persistent else 'fresh per match'}\n      artifact {v.artifact}"
        )


@app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="bot name")]) -> None:
    """Remove a bot from listings and new tournaments (its versions and results are kept)."""
    with database() as db:
        remove_bot(db, name)
    typer.echo(f"removed {name} (history kept; 'arena bots add {name} PATH' brings it back)")
