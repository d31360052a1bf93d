"""``arena serve``: the lobby where remote bots connect in over TCP and are matched while online."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path
from typing import Annotated

import typer

from arena.engine.chance import SEED_LIMIT
from arena.hosting import sandbox_choice
from arena.lifecycle import STOP_SIGNALS, Stopped, exit_status
from arena.lobby import Lobby, LobbyConfig, LobbyError
from arena.referee.server import TlsFiles

from .common import database, fail


def serve(
    listen: Annotated[str, typer.Option(help="host:port where remote bots connect")] = "127.0.0.1:50051",
    opponents: Annotated[
        str, typer.Option(help="registered local bots to play them, comma-separated")
    ] = "greedy",
    players: Annotated[int, typer.Option(min=2, max=4, help="players per table")] = 2,
    games: Annotated[int, typer.Option(min=0, help="matches per remote bot (0: while it is online)")] = 2,
    move_time: Annotated[float, typer.Option(min=0.001, help="seconds per decision")] = 1.0,
    bank: Annotated[float, typer.Option(min=0.0, help="overage bank in seconds")] = 10.0,
    grace: Annotated[
        float, typer.Option(min=0.0, help="seconds a dropped remote bot may take to return")
    ] = 30.0,
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="seed (default: random)")
    ] = None,
    tls_cert: Annotated[Path | None, typer.Option(help="PEM certificate chain: serve TLS")] = None,
    tls_key: Annotated[Path | None, typer.Option(help="PEM private key of --tls-cert")] = None,
    duration: Annotated[
        float, typer.Option(min=0.0, help="stop after this many seconds (0: when done)")
    ] = 0.0,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run the local opponents unsandboxed")
    ] = False,
    cpu_time: Annotated[
        bool, typer.Option("--cpu-time", help="charge the local opponents CPU time, not wall-clock time")
    ] = False,
) -> None:
    """Serve remote bots: each plays --games matches against --opponents while it is online."""
    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("give both --tls-cert and --tls-key, or neither", param_hint="--tls-cert")
    tls = None
    if tls_cert is not None and tls_key is not None:
        for f in (tls_cert, tls_key):
            if not f.is_file():
                raise fail(f"{f}: no such file", 2)
        tls = TlsFiles(tls_cert, tls_key)
    config = LobbyConfig(
        listen=listen,
        opponents=tuple(o.strip() for o in opponents.split(",") if o.strip()),
        players=players,
        games=games,
        move_time=move_time,
        bank=bank,
        grace=grace,
        seed=random.randrange(SEED_LIMIT) if seed is None else seed,
        tls=tls,
        sandbox=sandbox_choice(no_sandbox),
        duration=duration,
        cpu_clock=cpu_time,
    )
    stopped: list[int] = []
    cut: list[int] = []  # matches a stop cut short
    with database() as db:

        async def main() -> int:
            lobby = Lobby(db, config, log=lambda line: typer.echo(line, err=True))
            _stop_on_signals(lobby, stopped)
            try:
                address = await lobby.start()
                names = ", ".join(r.name for r in lobby.remotes)
                typer.echo(
                    f"lobby (tournament {lobby.tournament_id}) listening on {address}"
                    f"{' with TLS' if tls else ''} for remote bots: {names}",
                    err=True,
                )
                return await lobby.run()
            finally:
                cut.append(lobby.interrupted)
                await lobby.close()

        try:
            played = asyncio.run(main())
        except LobbyError as exc:
            raise fail(str(exc), 2) from None
        except KeyboardInterrupt:
            raise fail("stopped", 130) from None
    if stopped:  # one line, exit 128 + the signal
        shown = f", {cut[0]} in progress recorded as failed (interrupted)" if cut and cut[0] else ""
        typer.echo(f"arena serve: {Stopped(stopped[0]).how()}: {played} matches played{shown}", err=True)
        raise typer.Exit(exit_status(stopped[0]))
    typer.echo(f"{played} matches played; see 'arena leaderboard' and 'arena replays list'", err=True)


def _stop_on_signals(lobby: Lobby, stopped: list[int]) -> None:
    """SIGINT, SIGTERM and SIGHUP stop the lobby cleanly (see :meth:`Lobby.stop`); the signal is
    appended to ``stopped``.  A second one ends the process at once."""
    loop = asyncio.get_running_loop()

    def stop(signum: int) -> None:
        if stopped:
            os._exit(exit_status(signum))
        stopped.append(signum)
        lobby.stop()

    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            loop.add_signal_handler(sig, stop, sig)
