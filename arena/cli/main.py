"""Entry point of the ``arena`` command."""

from __future__ import annotations

import typer

from . import (
    bots_cmd,
    engine_cmd,
    evaluate_cmd,
    leaderboard_cmd,
    match_cmd,
    replays_cmd,
    serve_cmd,
    tournament_cmd,
    web_cmd,
    worker_cmd,
)

app = typer.Typer(
    help="Pool Arena: tournaments and bot matches for the dice game Cool am Pool.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(engine_cmd.app, name="engine")
app.command(name="match")(match_cmd.match)
app.command(name="evaluate")(evaluate_cmd.evaluate)
app.add_typer(bots_cmd.app, name="bots")
app.command(name="serve")(serve_cmd.serve)
app.add_typer(tournament_cmd.app, name="tournament")
app.add_typer(leaderboard_cmd.app, name="leaderboard")
app.add_typer(replays_cmd.app, name="replays")
app.command(name="web")(web_cmd.web)
app.command(name="worker")(worker_cmd.worker)


def main() -> None:
    """Run the ``arena`` command line."""
    app()
