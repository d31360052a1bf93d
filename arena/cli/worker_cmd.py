"""``arena worker``: serve a tournament coordinator's matches as Dask worker processes."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer

from arena.lifecycle import Stopped, exit_status, run_supervised
from arena.tournament.runner import default_jobs


def worker(
    scheduler: Annotated[
        str, typer.Option("--scheduler", metavar="ADDRESS", help="the Dask scheduler, e.g. tcp://HOST:8786")
    ],
    nworkers: Annotated[
        int | None,
        typer.Option(
            "--nworkers", min=1, help="worker processes, one match at a time each (default: one per core)"
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="a name for these workers (Dask's --name)")] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            help="data folder for the bot artifact cache and logs (default: $ARENA_HOME or ./arena-data)"
        ),
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="print the 'dask worker' command instead of running it")
    ] = False,
) -> None:
    """Start Dask worker processes that play tournament matches for a scheduler.

    The same as: dask worker ADDRESS --nworkers N --nthreads 1 --preload arena.tournament.cluster

    Each process keeps a referee and its (sandboxed) bots running between matches.

    Bot files come from the coordinator once per machine, cached by sha256 in ARENA_HOME/artifacts.
    """

    from arena.tournament.cluster import worker_command

    argv = worker_command(scheduler, nworkers or default_jobs(), name=name)
    if print_only:
        typer.echo(shlex.join(argv))
        return
    if home is not None:
        os.environ["ARENA_HOME"] = str(home.resolve())
    # A child that dies with this process; a stop signal is passed on to it once (it closes its
    # workers, which stop their bots), then this process says so in one line: exit 128 + signal.
    code, stop = run_supervised(argv)
    if stop is not None:
        typer.echo(f"arena worker: {Stopped(stop).how()}", err=True)
        raise typer.Exit(exit_status(stop))
    raise typer.Exit(code)
