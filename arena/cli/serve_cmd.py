"""``arena serve``: the lobby where remote bots connect in over TCP and are matched while online."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Annotated

import typer

from arena.engine.chance import SEED_LIMIT
from arena.lobby import Lobby, LobbyConfig, LobbyError
from arena.matchrunner import sandbox_choice
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
    )
    with database() as db:

        async def main() -> int:
            lobby = Lobby(db, config, log=lambda line: typer.echo(line, err=True))
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
                await lobby.close()

        try:
            played = asyncio.run(main())
        except LobbyError as exc:
            raise fail(str(exc), 2) from None
        except KeyboardInterrupt:
            raise fail("stopped", 130) from None
    typer.echo(f"{played} matches played; see 'arena leaderboard' and 'arena replays list'", err=True)
