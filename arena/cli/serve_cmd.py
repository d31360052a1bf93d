"""``arena serve``: the arena server -- the web app with accounts and bot uploads, the match
workers that validate uploads (and run other background services), and, with ``--listen``, the
lobby where remote bots connect in over TCP and are matched while online."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from arena.engine.chance import SEED_LIMIT
from arena.hosting import sandbox_choice
from arena.lifecycle import Stopped, exit_status
from arena.lobby import MAX_GAMES as LOBBY_MAX_GAMES
from arena.lobby import LobbyConfig, LobbyError
from arena.referee.hardening import LISTEN_CONNECTIONS
from arena.referee.server import TlsFiles
from arena.referee.timecontrol import MAX_BANK, MAX_MOVE_TIME
from arena.seeds import secret_seed

from .common import MAX_JOBS, cannot_listen, database, fail, web_environment


def serve(
    host: Annotated[
        str, typer.Option(help="address of the web server (0.0.0.0: every interface)")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="port of the web server (0: any free port)")
    ] = 8000,
    jobs: Annotated[
        int, typer.Option(min=1, max=MAX_JOBS, help="local worker processes for validation matches")
    ] = 2,
    cluster: Annotated[
        str | None, typer.Option(help="play matches on this Dask scheduler (tcp://HOST:8786) instead")
    ] = None,
    no_signup: Annotated[
        bool, typer.Option("--no-signup", help="only the admin makes accounts (no sign-up page)")
    ] = False,
    secure_cookies: Annotated[
        bool, typer.Option("--secure-cookies", help="mark cookies Secure (behind an HTTPS proxy)")
    ] = False,
    listen: Annotated[
        str | None,
        typer.Option("--listen", "--lobby", help="host:port where remote bots connect (the lobby)"),
    ] = None,
    max_connections: Annotated[
        int,
        typer.Option(
            "--lobby-connections",
            min=1,
            max=1_000_000,
            help="lobby: connections the listener holds at once, all clients together (more are "
            "closed at once; a flood cannot take the open files the rest of the server needs)",
        ),
    ] = LISTEN_CONNECTIONS,
    opponents: Annotated[
        str,
        typer.Option(
            help="lobby: local bots to play remote bots (registered or sample names), comma-separated"
        ),
    ] = "greedy",
    players: Annotated[int, typer.Option(min=2, max=4, help="lobby: players per table")] = 2,
    games: Annotated[
        int,
        typer.Option(
            min=0, max=LOBBY_MAX_GAMES, help="lobby: matches per remote bot (0: while it is online)"
        ),
    ] = 2,
    move_time: Annotated[
        float, typer.Option(min=0.001, max=MAX_MOVE_TIME, help="lobby: seconds per decision")
    ] = 1.0,
    bank: Annotated[float, typer.Option(min=0.0, max=MAX_BANK, help="lobby: overage bank in seconds")] = 10.0,
    grace: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="lobby: seconds a dropped remote bot may take to return; also the time away, in "
            "all per match, not charged to its clock",
        ),
    ] = 30.0,
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="lobby: seed (default: random)")
    ] = None,
    tls_cert: Annotated[Path | None, typer.Option(help="lobby: PEM certificate chain: serve TLS")] = None,
    tls_key: Annotated[Path | None, typer.Option(help="lobby: PEM private key of --tls-cert")] = None,
    duration: Annotated[
        float, typer.Option(min=0.0, help="stop after this many seconds (0: when stopped)")
    ] = 0.0,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run bots unsandboxed (only bots you trust)")
    ] = False,
    cpu_time: Annotated[
        bool, typer.Option("--cpu-time", help="lobby: charge local opponents CPU time, not wall-clock time")
    ] = False,
    live_address: Annotated[
        str | None,
        typer.Option(
            "--live-address",
            metavar="HOST:PORT",
            help="signed UDP endpoint where cluster workers send live match events (port 0: any free "
            "port; default with --cluster: this host's address towards the scheduler, any port)",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="trust X-Forwarded-For/-Proto from these proxy addresses (comma-separated; "
            "default: none, the connecting address is the client's)",
        ),
    ] = None,
) -> None:
    """Run the arena server: web app with accounts and uploads, match workers, and the lobby."""
    from arena.serve.runner import ServeOptions, run
    from arena.serve.services import ServeContext
    from arena.store.db import describe
    from arena.web.server import bind, url_of

    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("give both --tls-cert and --tls-key, or neither", param_hint="--tls-cert")
    tls = None
    if tls_cert is not None and tls_key is not None:
        for f in (tls_cert, tls_key):
            if not f.is_file():
                raise fail(f"{f}: no such file", 2)
        tls = TlsFiles(tls_cert, tls_key)
    _live_endpoint(live_address, cluster)
    sandbox = sandbox_choice(no_sandbox)
    lobby = None
    if listen is not None:
        lobby = LobbyConfig(
            listen=listen,
            opponents=tuple(o.strip() for o in opponents.split(",") if o.strip()),
            players=players,
            games=games,
            move_time=move_time,
            bank=bank,
            grace=grace,
            seed=secret_seed() if seed is None else seed,
            tls=tls,
            sandbox=sandbox,
            duration=0.0,
            cpu_clock=cpu_time,
            max_connections=max_connections,
        )
    options = ServeOptions(
        jobs=jobs,
        cluster=cluster,
        sandbox_off=no_sandbox,
        signup=not no_signup,
        secure_cookies=secure_cookies,
        lobby=lobby,
        duration=duration,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    web_environment()
    with database() as db:
        if sandbox is not None:
            _require_sandbox()
        try:
            sock = bind(host, port)
        except OSError as exc:
            raise fail(cannot_listen(host, port, exc), 2) from None

        def say(line: str) -> None:
            typer.echo(line, err=True)

        ctx = ServeContext(db, jobs=jobs, cluster=cluster, sandbox=sandbox, log=say)

        def ready(services: list[Any], running_lobby: Any, address: str | None) -> None:
            where = f"the Dask cluster {cluster}" if cluster else f"{jobs} local worker process(es)"
            running = ", ".join(s.name for s in services) or "none"
            say(
                f"Pool Arena server: {url_of(sock)}  (database {describe(db.url)}; matches on {where}"
                f"{'' if sandbox else ', UNSANDBOXED'}; services: {running}; Ctrl-C to stop)"
            )
            if address is not None and running_lobby is not None:
                names = ", ".join(r.name for r in running_lobby.remotes)
                say(
                    f"lobby (tournament {running_lobby.tournament_id}) listening on {address}"
                    f"{' with TLS' if tls else ''} for remote bots: {names}"
                )

        try:
            outcome = asyncio.run(run(db, sock, options, ctx, on_ready=ready))
        except LobbyError as exc:
            raise fail(str(exc), 2) from None
        except KeyboardInterrupt:
            raise fail("stopped", 130) from None
        finally:
            sock.close()
    for error in outcome.errors:
        say(f"error: {error}")
    lobby_part = ""
    if outcome.lobby_played is not None:
        cut = outcome.lobby_cut
        lobby_part = f": {outcome.lobby_played} matches played" + (
            f", {cut} in progress recorded as failed (interrupted)" if cut else ""
        )
    if outcome.stuck:
        say(
            f"arena serve: {', '.join(outcome.stuck)} did not stop in time: ending without waiting "
            f"(their matches in flight are played again at the next start)"
        )
    if outcome.signum is not None:  # one line, exit 128 + the signal
        say(f"arena serve: {Stopped(outcome.signum).how()}{lobby_part}")
        _end(exit_status(outcome.signum), outcome.stuck)
    say(f"arena serve: stopped after {duration:g} s{lobby_part}")
    _end(1 if outcome.errors else 0, outcome.stuck)


def _end(status: int, stuck: list[str]) -> NoReturn:
    """Exit with ``status``.  With a service stuck, at once (``os._exit``): the interpreter's own
    exit would wait for its threads and worker pools for ever.  Its worker processes end with
    this process (they are sent SIGTERM when their parent dies) and its bots with them."""
    if stuck:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    raise typer.Exit(status)


def _require_sandbox() -> None:
    """Uploaded bots are untrusted: refuse to start without a working sandbox (--no-sandbox to
    run only bots you trust)."""
    from arena.sandbox import require_bwrap

    try:
        require_bwrap()
    except Exception as exc:
        raise fail(f"{exc}; or run only bots you trust with --no-sandbox", 2) from None


def _live_endpoint(live_address: str | None, cluster: str | None) -> None:
    """Set ``$ARENA_LIVE_UDP`` for the web hub (:mod:`arena.live.remote`): ``--live-address``, or
    with ``--cluster`` (and the variable unset) the local address routing to the scheduler."""
    import os

    from arena.live.remote import UDP_ENV, parse_bind

    if live_address is not None:
        try:
            parse_bind(live_address)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--live-address") from None
        os.environ[UDP_ENV] = live_address
    elif cluster and not os.environ.get(UDP_ENV):
        from arena.tournament.cluster import listen_host

        try:
            host = listen_host(cluster)
        except ValueError as exc:
            raise typer.BadParameter(f"{exc}; or give --live-address", param_hint="--cluster") from None
        os.environ[UDP_ENV] = f"[{host}]:0" if ":" in host else f"{host}:0"
