"""``arena worker``: serve a tournament coordinator's matches as Dask worker processes."""

from __future__ import annotations

import os
import shlex
import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from arena.lifecycle import Stopped, StopSignals, exit_status, run_supervised
from arena.safetext import small_int
from arena.tournament.runner import default_jobs

MAX_WORKERS = 1024
"""The most --nworkers: 99999999999 made Dask start nannies until stopped."""
RETRY_EVERY = 2.0
"""Seconds between two attempts to reach a scheduler that is not there yet."""


def _cannot_listen(host: str) -> str | None:
    """Why this machine cannot listen on ``host`` (None when it can): an address it does not
    have made every nanny fail to start, in a Dask traceback."""
    import socket

    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.bind(where)
    except OSError as exc:
        return str(exc) or type(exc).__name__
    return None


def _check_dashboard(address: str) -> None:
    """Refuse a --dashboard-address that is not ``[HOST]:PORT`` of this machine (``garbage`` ended
    in a Dask traceback, exit 1)."""
    host, sep, port = address.rpartition(":")
    number = small_int(port)
    if not sep or number is None or not 0 <= number <= 65535:
        raise typer.BadParameter(
            f"{address!r} is not [HOST]:PORT (a port 0-65535, e.g. 8787 or 0.0.0.0:8787)",
            param_hint="--dashboard-address",
        )
    host = host.removeprefix("[").removesuffix("]") or "0.0.0.0"
    problem = _cannot_listen(host)
    if problem is not None:
        raise typer.BadParameter(f"cannot listen on {host}: {problem}", param_hint="--dashboard-address")


def _wait_for_scheduler(address: str) -> None:
    """Return once a Dask scheduler answers at ``address``; until then say once, in one line,
    that the workers wait for it.  Waiting is what ``dask worker`` does too, but silently, and a
    stop while it waited printed a hundred lines of Dask's traceback.  A malformed address, or
    something at it that does not speak Dask's protocol, is refused at once (exit 1): waiting
    cannot mend it.  A stop signal meanwhile ends the command in one line (exit 128 + the
    signal)."""
    from arena.tournament.cluster import scheduler_problem

    said = False
    try:
        with StopSignals():  # a stop signal raises Stopped here (an ignored one stays ignored)
            while (problem := scheduler_problem(address)) is not None:
                if problem.lasting:
                    typer.echo(f"arena worker: no Dask scheduler at {address}: {problem.text}", err=True)
                    raise typer.Exit(1)
                if not said:
                    typer.echo(
                        f"arena worker: waiting for the Dask scheduler at {address} ({problem.text}); "
                        "the workers start once it answers (Ctrl-C stops)",
                        err=True,
                    )
                    said = True
                time.sleep(RETRY_EVERY)
    except Stopped as stop:
        typer.echo(f"arena worker: {stop.how()}", err=True)
        raise typer.Exit(exit_status(stop.signum)) from None
    if said:
        typer.echo(f"arena worker: the scheduler at {address} answers; starting the workers", err=True)


def worker(
    scheduler: Annotated[
        str, typer.Option("--scheduler", metavar="ADDRESS", help="the Dask scheduler, e.g. tcp://HOST:8786")
    ],
    nworkers: Annotated[
        int | None,
        typer.Option(
            "--nworkers",
            min=1,
            max=MAX_WORKERS,
            help="worker processes, one match at a time each (default: one per core)",
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="a name for these workers (Dask's --name)")] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            help="data folder for the bot artifact cache and logs (default: $ARENA_HOME or ./arena-data)"
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            "--listen",
            metavar="ADDRESS",
            help="the address the workers listen on (default: 127.0.0.1 for a scheduler on this machine's "
            "loopback, else this machine's address towards the scheduler; 0.0.0.0: every interface)",
        ),
    ] = None,
    dashboard_address: Annotated[
        str | None,
        typer.Option(
            "--dashboard-address",
            metavar="[HOST]:PORT",
            help="serve Dask's diagnostics dashboard there (a port alone: on --host; default: no dashboard)",
        ),
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="print the 'dask worker' command instead of running it")
    ] = False,
) -> None:
    """Start Dask worker processes that play tournament matches for a scheduler.

    The same as: dask worker ADDRESS --nworkers N --nthreads 1 --preload arena.tournament.cluster
    --host HOST --no-dashboard

    The workers (and their nannies) accept connections on --host only: the scheduler and the
    other workers must reach them there.  Nothing of Dask's traffic is authenticated or encrypted
    (see the README's cluster section).

    Each process keeps a referee and its (sandboxed) bots running between matches.

    Bot files come from the coordinator once per machine, cached by sha256 in ARENA_HOME/artifacts.
    """

    from arena.tournament.cluster import worker_command

    try:
        argv = worker_command(
            scheduler, nworkers or default_jobs(), name=name, host=host, dashboard=dashboard_address
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--scheduler") from None
    if print_only:
        typer.echo(shlex.join(argv))
        return
    listen = argv[argv.index("--host") + 1]
    problem = _cannot_listen(listen)
    if problem is not None:
        raise typer.BadParameter(
            f"cannot listen on {listen}: {problem}; give an address of this machine "
            "(0.0.0.0: every interface)",
            param_hint="--host",
        )
    if dashboard_address is not None:
        _check_dashboard(argv[argv.index("--dashboard-address") + 1])
    if home is not None:
        os.environ["ARENA_HOME"] = str(home.resolve())
    _wait_for_scheduler(scheduler)
    # A child that dies with this process; a stop signal is passed on to it once, as SIGTERM (it
    # closes its workers, which stop their bots), then this process says so in one line: exit
    # 128 + the signal received.  As SIGTERM because `dask worker` stops cleanly on SIGINT and
    # SIGTERM only once it runs: a SIGHUP (a closed terminal) killed it outright, its nannies'
    # semaphores reported leaked, and a Ctrl-C while it was still importing printed its traceback.
    code, stop = run_supervised(argv, pass_on_as=signal.SIGTERM)
    if stop is not None:
        typer.echo(f"arena worker: {Stopped(stop).how()}", err=True)
        raise typer.Exit(exit_status(stop))
    raise typer.Exit(code)
