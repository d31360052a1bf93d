"""``arena web``: serve the leaderboard, tournaments, matches and the replay viewer."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.lifecycle import Stopped, StopSignals, exit_status

from .common import cannot_listen, database, fail, web_environment


def web(
    host: Annotated[str, typer.Option(help="address to listen on (0.0.0.0: every interface)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: any free port)")] = 8000,
) -> None:
    """Serve the web app: leaderboard, tournaments, matches and the replay viewer (Ctrl-C stops)."""
    from arena.web.app import create_app
    from arena.web.server import bind, serve, url_of

    web_environment()
    with database(readonly=True) as db:
        try:
            sock = bind(host, port)
        except OSError as exc:
            raise fail(cannot_listen(host, port, exc)) from None
        app = create_app(db)
        typer.echo(f"Pool Arena web: {url_of(sock)}  (database {db.url}; Ctrl-C to stop)")
        try:
            with StopSignals():  # uvicorn stops cleanly on SIGINT/SIGTERM, then hands the signal on
                serve(app, sock)
        except Stopped as stop:  # one line, exit 128 + the signal
            typer.echo(f"arena web: {stop.how()}", err=True)
            raise typer.Exit(exit_status(stop.signum)) from None
        except KeyboardInterrupt:
            pass
        finally:
            sock.close()
