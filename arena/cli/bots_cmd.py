"""``arena bots``: register, list, show and remove bots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from arena.store.botnames import DEFAULT_MAX_BOT_MB, MAX_BOT_MB_ENV, NAME_RE
from arena.store.errors import BotRegistryError
from arena.termui import make_console

from .common import database, fail

# arena.store.bots (and with it SQLModel) is imported inside the commands that need it: `bots list`
# on the default SQLite database answers without the ORM (arena.store.quickread) and starts fast.

STDERR_LINES = 12  # lines of a refused bot's stderr shown

app = typer.Typer(
    help="Register and manage bots (each upload is an immutable version).", no_args_is_help=True
)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(metavar="NAME", help="bot name (letters, digits, _ . -)")],
    path: Annotated[
        Path | None,
        typer.Argument(metavar="PATH", help="the bot: a script (shebang or .py/.js/.sh) or an executable"),
    ] = None,
    fresh: Annotated[
        bool, typer.Option(help="start it fresh for every match instead of keeping it running")
    ] = False,
    remote: Annotated[
        bool, typer.Option(help="a remote bot that connects in over TCP: issue its token")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            help="first play a short check match against the random sample bot; a bot that forfeits "
            "it is refused (--no-check registers without it)"
        ),
    ] = True,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="play the check match unsandboxed (only bots you trust)")
    ] = False,
    max_size: Annotated[
        float | None,
        typer.Option(
            metavar="MB",
            help=f"largest bot file accepted, in MB (default: ${MAX_BOT_MB_ENV} or {DEFAULT_MAX_BOT_MB:g})",
        ),
    ] = None,
) -> None:
    """Register a bot file (adding the same name again makes a new version), or a remote bot.

    The file must be one non-empty script or executable within the size limit, and (unless
    --no-check) play a short sandboxed check match against the random sample bot without
    forfeiting it.
    """
    from arena.botref import removed, where_is
    from arena.store.bots import (
        add_bot,
        add_remote_bot,
        check_bot_file,
        max_bot_bytes,
        restore_stored_file,
        same_as_current,
    )

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
    if not path.exists():  # a path on the command line that names nothing: usage, as in 'arena match'
        raise fail(
            f"{path}: no such file{where_is(str(path), path)}; "
            "give the path of the bot's script or executable",
            2,
        )
    if path.is_dir():  # the argument names the wrong kind of thing: usage too
        raise fail(f"{path} is a directory: give the path of the bot's script or executable", 2)
    if not NAME_RE.match(name):  # the NAME argument itself is wrong: usage (exit 2), not bad data
        raise fail(
            f"bad bot name {name!r}: use 1-64 letters, digits, '_', '.' or '-' (first a letter or digit)", 2
        )
    try:
        limit = max_bot_bytes(max_size)
        check_bot_file(path, limit)
        _check_not_a_sample_name(name, path)
    except BotRegistryError as exc:
        raise fail(str(exc)) from None
    with database() as db:
        current = same_as_current(db, name, path)
        if current is not None:
            gone = removed(db, name)  # a removed bot: the file brings it back (add_bot below)
            if restore_stored_file(current, path):
                typer.echo(
                    f"restored the stored file of {name} version {current.version} ({current.filename})"
                )
                if not gone:
                    return
            elif not gone:  # nothing to do, and no error (scripts add their bots every time)
                typer.echo(
                    f"{name} version {current.version} is this file already (sha256 "
                    f"{current.sha256[:12]}, {current.filename}); nothing added"
                )
                return
        if check and current is None:  # a file already checked needs no check
            _check(name, path, no_sandbox)
        v = add_bot(db, name, path, persistent=not fresh, max_bytes=limit)
    typer.echo(f"added {name} version {v.version} (sha256 {v.sha256[:12]}, {v.filename})")


def _check_not_a_sample_name(name: str, path: Path) -> None:
    """A sample bot's name (``greedy``, ``search``, ...) may only be registered with that sample's
    own file (as the demo does): another file under it would silently stand in for the sample
    wherever the name is used (matches, ``evaluate --vs``, tournaments).  Raises
    :class:`BotRegistryError`."""
    from arena.botref import sample_bots

    sample = sample_bots().get(name)
    if sample is None:
        return
    try:
        same = path.read_bytes() == sample.read_bytes()
    except OSError:
        same = False
    if not same:
        raise BotRegistryError(
            f"the name {name!r} is reserved for the sample bot {sample.name}: register your bot under "
            "another name (a sample's name takes only the sample's own file)"
        )


def _check(name: str, path: Path, no_sandbox: bool) -> None:
    """Play the check match; refuse the bot (exit 1) when it forfeits."""
    from arena.botcheck import DECISIONS, OPPONENT, check_bot
    from arena.matchrunner import sandbox_choice
    from arena.sandbox import BotLaunchError, SandboxUnavailableError

    from .interrupt import run_interruptible

    sandbox = sandbox_choice(no_sandbox)
    where = "sandboxed" if sandbox else "NOT sandboxed"
    typer.echo(
        f"checking {name}: a match against {OPPONENT} ({where}, up to {DECISIONS} decisions)...", err=True
    )
    try:
        result = run_interruptible(check_bot(path, sandbox=sandbox))
    except SandboxUnavailableError as exc:
        raise fail(
            f"cannot check {name}: {exc}; check it unsandboxed with --no-sandbox (only a bot you trust) "
            f"or skip the check with --no-check"
        ) from None
    except BotLaunchError as exc:
        raise fail(f"{name} was not registered: {exc}") from None
    if result.passed:
        typer.echo(f"check {result.summary()}", err=True)
        return
    lines = [
        f"{name} was not registered: it forfeited its check match against {OPPONENT}: {result.summary()}"
    ]
    tail = result.stderr_tail.rstrip().splitlines()[-STDERR_LINES:]
    if tail:
        lines.append(f"its stderr, last {len(tail)} lines:")
        lines += [f"  | {line}" for line in tail]
    lines.append("fix the bot (try it with 'arena match PATH random'), or register it anyway with --no-check")
    raise fail("\n".join(lines))


@app.command("list")
def list_(all_: Annotated[bool, typer.Option("--all", help="include removed bots")] = False) -> None:
    """List the registered bots."""
    from arena.store.quickread import BotRow, bot_rows_fast

    rows = bot_rows_fast(include_removed=all_)
    if rows is None:  # not the plain SQLite case: the ORM path (and its precise messages)
        from arena.store.bots import list_bots

        with database(readonly=True) as db:
            rows = [BotRow.from_info(i) for i in list_bots(db, include_removed=all_)]
    if not rows:
        typer.echo("no bots registered; add one with 'arena bots add NAME PATH'")
        return
    table = Table(
        title="bots", caption="process: kept running across matches, or fresh for each ('bots add --fresh')"
    )
    for col in ("name", "version", "versions", "file", "sha256", "matches", "added", "status", "process"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r.name,
            str(r.version),
            str(r.versions),
            r.filename,
            r.sha256[:12],
            str(r.matches),
            r.created_at.strftime("%Y-%m-%d %H:%M"),
            "removed" if r.removed else "active",
            "kept" if r.persistent else "fresh",  # kept running across matches, or --fresh at 'bots add'
        )
    make_console().print(table)


@app.command("show")
def show(name: Annotated[str, typer.Argument(metavar="NAME", help="bot name")]) -> None:
    """Show a bot and all its versions."""
    from arena.store.bots import artifact_path, bot_versions

    with database(readonly=True) as db:
        bot, versions = bot_versions(db, name)
    status = f"removed {bot.removed_at:%Y-%m-%d %H:%M}" if bot.removed_at else "active"
    typer.echo(f"{bot.name} ({status}), {len(versions)} version(s)")
    for v in versions:
        typer.echo(
            f"  v{v.version}  {v.created_at:%Y-%m-%d %H:%M}  sha256 {v.sha256}  {v.filename}  "
            f"{'kept running' if v.persistent else 'fresh per match'}\n"
            f"      artifact {artifact_path(v) if v.artifact else '-'}"
        )


@app.command("remove")
def remove(name: Annotated[str, typer.Argument(metavar="NAME", help="bot name")]) -> None:
    """Remove a bot from listings and new tournaments (its versions and results are kept)."""
    from arena.botref import comeback, removed
    from arena.store.bots import remove_bot

    with database() as db:
        if removed(db, name):  # "no bot named" read as if it had never been there
            back = comeback(db, name)
            typer.echo(f"{name} was removed already (history kept; {back} brings it back)", err=True)
            return
        remove_bot(db, name)
        back = comeback(db, name)
    typer.echo(f"removed {name} (history kept; {back} brings it back)")
