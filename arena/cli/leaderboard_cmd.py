"""``arena leaderboard``: print ratings, and publish standing leaderboards."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.leaderboard import MIN_GAMES, leaderboard, render
from arena.ratings import DEFAULT_SYSTEM, UnknownRatingSystemError, get_system, system_names
from arena.safetext import shell_word
from arena.store.tournaments import get_tournament
from arena.termui import make_console

from .common import MAX_JOBS, database, fail


def systems_help() -> str:
    """The ``--system`` help, from the registry of rating systems: ``pl (default), elo or openskill``."""
    names = [f"{n} (default)" if n == DEFAULT_SYSTEM else n for n in system_names()]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


app = typer.Typer(
    help="Ratings with intervals; standing leaderboards in leaderboards/.", invoke_without_command=True
)


@app.callback()
def show(
    ctx: typer.Context,
    tournament: Annotated[int | None, typer.Option(help="only this tournament's matches")] = None,
    system: Annotated[str, typer.Option(help=systems_help())] = DEFAULT_SYSTEM,
    min_games: Annotated[
        int, typer.Option(min=0, help="games a bot needs to be ranked; fewer: listed as provisional")
    ] = MIN_GAMES,
    include_removed: Annotated[
        bool | None,
        typer.Option(
            "--include-removed/--hide-removed",
            help="list removed bots too (default: only in a tournament's standings)",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print the leaderboard over all finished matches (or one tournament).

    Bots are ranked conservatively (each system by its ranked-by column: Plackett-Luce and Elo by
    their 95% interval's lower bound, OpenSkill by mu - 3 sigma); bots with fewer than --min-games
    games are listed apart as provisional; removed bots are hidden from the all-matches leaderboard.
    The systems, and how each is shown, come from the registry in arena/ratings/systems.py; an
    unregistered --system is a usage error (exit 2) that lists the registered ones.
    """
    if ctx.invoked_subcommand is not None:
        return
    try:
        get_system(system)
    except UnknownRatingSystemError:  # "Invalid value for --system: choose from pl, elo, openskill"
        raise typer.BadParameter(f"choose from {', '.join(system_names())}", param_hint="--system") from None
    with database(readonly=True) as db:
        if tournament is not None:
            get_tournament(db, tournament)  # an unknown id is an error, not an empty leaderboard
        rows = leaderboard(
            db, tournament_id=tournament, system=system, min_games=min_games, include_removed=include_removed
        )
    if not rows:
        if tournament is not None:
            raise fail(
                f"tournament {tournament} has no finished matches yet; "
                f"'arena tournament start {tournament}' (or 'resume {tournament}') plays them"
            )
        raise fail(
            "no finished matches yet (only tournaments' matches are rated: stand-alone 'arena match' "
            "games are not); run 'arena tournament run ...' first"
        )
    title = f"Tournament {tournament}" if tournament is not None else "All matches"
    make_console().print(render(rows, system, title, min_games))


@app.command("publish")
def publish_(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME", help="a definition: NAME for leaderboards/NAME.toml, or the path of a .toml file"
        ),
    ],
    jobs: Annotated[
        int | None, typer.Option(min=1, max=MAX_JOBS, help="matches in parallel (default: cores)")
    ] = None,
) -> None:
    """Run a standing leaderboard and write its standings (Markdown + JSON) next to it."""
    from arena.publish import LEADERBOARDS, LeaderboardDefinitionError, publish
    from arena.tournament.display import TournamentDisplay

    folder = LEADERBOARDS
    if name.endswith(".toml") or "/" in name:  # a path: the definition's file, the output beside it
        given = Path(name).expanduser()
        if not given.is_file():
            raise fail(f"no leaderboard definition {given.resolve()}: no such file", 2)
        folder, name = given.resolve().parent, given.stem
        shown: str | None = shell_word(str(given))
    else:
        shown = None
    with database() as db:
        try:
            with TournamentDisplay(f"leaderboard {name}") as display:
                rows, md, js = publish(db, name, jobs=jobs, progress=display, folder=folder, shown=shown)
        except LeaderboardDefinitionError as exc:
            raise fail(str(exc), 2) from None
    make_console().print(render(rows, "pl", f"Leaderboard {name}"))
    typer.echo(f"wrote {md} and {js}", err=True)
