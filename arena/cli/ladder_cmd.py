"""``arena ladder``: run the continuous ladder and show its standings."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.engine.chance import SEED_LIMIT
from arena.referee.timecontrol import MAX_BANK, MAX_MOVE_TIME

from .common import MAX_JOBS, database, fail

app = typer.Typer(
    help="The continuous ladder: run it (until stopped) and show its standings.", no_args_is_help=True
)


NEW_ONLY = "a new ladder only: an existing one keeps its own"


@app.command("run")
def run(
    jobs: Annotated[
        int | None, typer.Option(min=1, max=MAX_JOBS, help="matches in parallel (default: number of cores)")
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=SEED_LIMIT - 1,
            help=f"the ladder's seed, default random and secret (it tells every throw) ({NEW_ONLY})",
        ),
    ] = None,
    tables: Annotated[
        str | None,
        typer.Option("--tables", help=f"players per table, cycled, default 2,3,4 ({NEW_ONLY})"),
    ] = None,
    move_time: Annotated[
        float | None,
        typer.Option(min=0.001, max=MAX_MOVE_TIME, help=f"seconds per decision, default 1 ({NEW_ONLY})"),
    ] = None,
    bank: Annotated[
        float | None,
        typer.Option(min=0.0, max=MAX_BANK, help=f"overage bank in seconds, default 10 ({NEW_ONLY})"),
    ] = None,
    no_sandbox: Annotated[
        bool,
        typer.Option("--no-sandbox", help=f"run the bots unsandboxed, only bots you trust ({NEW_ONLY})"),
    ] = False,
    new: Annotated[
        bool,
        typer.Option(
            "--new",
            help="start a new ladder with these settings (the current one keeps its matches and ratings "
            "but is no longer played)",
        ),
    ] = False,
    max_tables: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="this run hands out this many new tables, finishes them and stops (default: never; "
            "the next run goes on)",
        ),
    ] = None,
    stop_after: Annotated[
        int | None, typer.Option(min=1, help="this run stops after this many matches (the next run goes on)")
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster", metavar="ADDRESS", help="play on a Dask cluster: its scheduler, tcp://HOST:8786"
        ),
    ] = None,
) -> None:
    """Play the ladder until stopped (Ctrl-C, SIGTERM); started again, it resumes where it stopped.

    The seed, tables, time control and sandbox are chosen when the ladder is created and kept
    for good (--new starts a new ladder); --max-tables and --stop-after limit this run only."""
    from arena.ladder.field import (
        GUESSABLE_WARNING,
        MAX_TABLE_CYCLE,
        find_ladder,
        guessable_seed,
        stored_differences,
    )
    from arena.ladder.service import LadderSettings, play_ladder
    from arena.lifecycle import Stopped, StopSignals, exit_status
    from arena.referee.timecontrol import TimeControl
    from arena.sandbox.limits import SandboxLimits
    from arena.tournament.runner import MatchExecutor, Progress

    sizes: tuple[int, ...] | None = None
    if tables is not None:
        try:
            sizes = tuple(int(k) for k in tables.split(",") if k.strip())
        except ValueError:
            raise fail(f"--tables takes player counts like 2,3,4, got {tables!r}", 2) from None
        if not sizes or any(not 2 <= k <= 4 for k in sizes):
            raise fail(f"--tables takes player counts of 2, 3 or 4, got {tables!r}", 2)
        if len(sizes) > MAX_TABLE_CYCLE:  # before anything is written: --new keeps the current ladder
            raise fail(
                f"--tables takes at most {MAX_TABLE_CYCLE} player counts (the cycle is stored), got "
                f"{len(sizes)}: {tables!r}",
                2,
            )
    if cluster is not None:  # before the ladder is made, or --new ends the current one
        from arena.tournament.cluster import ClusterUnavailableError, check_scheduler

        try:
            check_scheduler(cluster)
        except ClusterUnavailableError as exc:
            raise fail(str(exc), 1) from None
    settings = LadderSettings(
        seed=seed,
        table_sizes=sizes or (2, 3, 4),
        control=TimeControl(1.0 if move_time is None else move_time, 10.0 if bank is None else bank),
        sandbox=None if no_sandbox else SandboxLimits(),
        max_tables=max_tables,
        new=new,
    )

    gone = False  # stderr failed once (a closed pipe, a hung-up terminal): the run goes on, quietly

    def say(text: str) -> None:
        nonlocal gone
        if gone:
            return
        try:
            typer.echo(text, err=True)
        except OSError:
            gone = True

    def idle() -> None:
        say(
            "ladder: waiting for a table: fewer than 2 active bots ('arena bots add NAME FILE', or "
            "uploads on 'arena serve', add more; Ctrl-C stops)"
        )

    def progress(p: Progress) -> None:
        if p.last is not None and p.task is not None:
            names = ", ".join(
                f"{s.name}:{o.placing}" for s, o in zip(p.task.seats, p.last.seats, strict=True)
            )
            say(f"ladder match {p.task.match_id}: {names}")

    with database() as db:
        found = None if new else find_ladder(db)
        if found is not None:
            differ = stored_differences(
                found, seed=seed, table_sizes=sizes, move_time=move_time, bank=bank, sandboxed=not no_sandbox
            )
            for option, kept, asked in differ:
                typer.echo(
                    f"warning: the ladder (tournament {found.id}) keeps its {option} setting: {kept} "
                    f"(this run asked for {asked}); it is chosen when a ladder is created",
                    err=True,
                )
            if differ:
                typer.echo(
                    "warning: to play with other settings, start a new ladder: 'arena ladder run --new' "
                    "with them (the current one keeps its matches and ratings)",
                    err=True,
                )
            if guessable_seed(found.seed):
                typer.echo(f"warning: {GUESSABLE_WARNING.format(id=found.id)}", err=True)

        def on_cluster(_tid: int, _run: object) -> MatchExecutor:
            from arena.serve.executors import ClusterMatches

            assert cluster is not None
            return ClusterMatches(db, cluster)

        try:
            with StopSignals(hint="'arena ladder run' goes on with the ladder where it was"):
                done = play_ladder(
                    db, settings, jobs=jobs, progress=progress, stop_after=stop_after,
                    executor=on_cluster if cluster is not None else None, on_idle=idle,
                )  # fmt: skip
        except Stopped as stop:
            raise fail(
                "the ladder stopped; 'arena ladder run' resumes it", exit_status(stop.signum)
            ) from None
    tid, played = done.tournament_id, done.played
    if done.ended == "max_tables":
        typer.echo(
            f"the ladder (tournament {tid}) played {_matches(played)} and stopped as asked after "
            f"{_tables(max_tables or 0)} (--max-tables); 'arena ladder run' goes on",
            err=True,
        )
    else:
        typer.echo(
            f"the ladder (tournament {tid}) played {_matches(played)} and stopped as asked (--stop-after); "
            "'arena ladder run' goes on",
            err=True,
        )


def _matches(n: int) -> str:
    return f"{n} match" if n == 1 else f"{n} matches"


def _tables(n: int) -> str:
    return f"{n} new table" if n == 1 else f"{n} new tables"


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
    typer.echo(
        f"{'#':>3} {'bot':<24} {'mu-3sigma':>9}  (ranked by it; fewer than {min_games} games: provisional)"
    )
    for row in board.rows:
        place = str(row.rank) if row.rank is not None else "-"
        typer.echo(
            f"{place:>3} {row.bot:<24} {row.conservative:9.2f}  mu {row.mu:6.2f} sigma {row.sigma:5.2f}  "
            f"{row.games} games{'  (provisional)' if row.provisional else ''}"
        )
