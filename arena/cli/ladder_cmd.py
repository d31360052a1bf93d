"""``arena ladder``: run the continuous ladder and show its standings."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import database, fail

app = typer.Typer(
    help="The continuous ladder: run it (until stopped) and show its standings.", no_args_is_help=True
)


@app.command("run")
def run(
    jobs: Annotated[
        int | None, typer.Option(min=1, help="matches in parallel (default: number of cores)")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="the ladder's seed (a new ladder only)")] = 1,
    tables: Annotated[str, typer.Option("--tables", help="players per table, cycled: e.g. 2,3,4")] = "2,3,4",
    move_time: Annotated[
        float, typer.Option(min=0.001, help="seconds per decision (a new ladder only)")
    ] = 1.0,
    bank: Annotated[float, typer.Option(min=0.0, help="overage bank in seconds (a new ladder only)")] = 10.0,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run the bots unsandboxed (only bots you trust)")
    ] = False,
    max_tables: Annotated[
        int | None, typer.Option(min=1, help="stop after this many tables (default: never)")
    ] = None,
    stop_after: Annotated[int | None, typer.Option(min=1, help="stop after this many matches")] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster", metavar="ADDRESS", help="play on a Dask cluster: its scheduler, tcp://HOST:8786"
        ),
    ] = None,
) -> None:
    """Play the ladder until stopped (Ctrl-C, SIGTERM); started again, it resumes where it stopped."""
    from arena.ladder.service import LadderSettings, run_ladder
    from arena.lifecycle import Stopped, StopSignals, exit_status
    from arena.referee.timecontrol import TimeControl
    from arena.sandbox.limits import SandboxLimits
    from arena.tournament.runner import MatchExecutor, Progress

    try:
        sizes = tuple(int(k) for k in tables.split(",") if k.strip())
    except ValueError:
        raise fail(f"--tables takes player counts like 2,3,4, got {tables!r}", 2) from None
    if not sizes or any(not 2 <= k <= 4 for k in sizes):
        raise fail(f"--tables takes player counts of 2, 3 or 4, got {tables!r}", 2)
    settings = LadderSettings(
        seed=seed,
        table_sizes=sizes,
        control=TimeControl(move_time, bank),
        sandbox=None if no_sandbox else SandboxLimits(),
        max_tables=max_tables,
    )

    def progress(p: Progress) -> None:
        if p.last is not None and p.task is not None:
            names = ", ".join(
                f"{s.name}:{o.placing}" for s, o in zip(p.task.seats, p.last.seats, strict=True)
            )
            typer.echo(f"ladder match {p.task.match_id}: {names}", err=True)

    with database() as db:

        def on_cluster(_tid: int, _run: object) -> MatchExecutor:
            from arena.serve.executors import ClusterMatches

            assert cluster is not None
            return ClusterMatches(db, cluster)

        try:
            with StopSignals():
                tid = run_ladder(
                    db, settings, jobs=jobs, progress=progress, stop_after=stop_after,
                    executor=on_cluster if cluster else None,
                )  # fmt: skip
        except Stopped as stop:
            raise fail(
                "the ladder stopped; 'arena ladder run' resumes it", exit_status(stop.signum)
            ) from None
        typer.echo(f"the ladder (tournament {tid}) stopped as asked", err=True)


@app.command("show")
def show(
    min_games: Annotated[int, typer.Option(min=0, help="games before a bot is ranked")] = 10,
) -> None:
    """The ladder's standings: OpenSkill mu - 3 sigma, games, and the provisional bots."""
    from arena.ladder.board import ladder_board

    with database(readonly=True) as db:
        board = ladder_board(db, min_games=min_games)
    if board is None:
        raise fail("there is no ladder yet; start one with 'arena ladder run'")
    for row in board.rows:
        place = str(row.rank) if row.rank is not None else "-"
        typer.echo(
            f"{place:>3} {row.bot:<24} {row.conservative:7.2f}  mu {row.mu:6.2f} sigma {row.sigma:5.2f}  "
            f"{row.games} games{'  (provisional)' if row.provisional else ''}"
        )
