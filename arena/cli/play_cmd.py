"""``arena play``: a person plays one seat against bots, in the browser."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.engine.chance import SEED_LIMIT
from arena.referee.timecontrol import MAX_BANK, MAX_MOVE_TIME
from arena.seeds import secret_seed

from .common import FORFEIT_EXIT, cannot_listen, fail, refuse_clock_with_unlimited, web_environment
from .interrupt import run_interruptible
from .rules_option import RULES_HELP, parse_rules

if TYPE_CHECKING:
    from fastapi import FastAPI

    from arena.humanseat.session import PlayRegistry, PlaySession
    from arena.store.db import Database


def play(
    ctx: typer.Context,
    bots: Annotated[
        list[str],
        typer.Argument(
            metavar="BOT",
            help="1-3 bots to play against, each a script/executable path, a registered bot (NAME or NAME@N) "
            "or a sample name (greedy, greedy-naive, invader, random, search)",
        ),
    ],
    seat: Annotated[int, typer.Option(min=0, max=3, help="your seat (0 places and plays first)")] = 0,
    players: Annotated[
        int | None,
        typer.Option(
            min=2, max=4, help="players in the match (default: the bots and you; bots repeat to fill)"
        ),
    ] = None,
    move_time: Annotated[
        float, typer.Option(min=1.0, max=MAX_MOVE_TIME, help="seconds per decision (yours and the bots')")
    ] = 60.0,
    bank: Annotated[float, typer.Option(min=0.0, max=MAX_BANK, help="overage bank in seconds")] = 0.0,
    unlimited: Annotated[bool, typer.Option(help="no time limits")] = False,
    grace: Annotated[
        float,
        typer.Option(
            min=0.5, max=MAX_BANK, help="seconds a closed page may take to come back before you forfeit"
        ),
    ] = 30.0,
    open_wait: Annotated[
        float, typer.Option(min=1.0, max=MAX_BANK, help="seconds to open the page at all before you forfeit")
    ] = 300.0,
    name: Annotated[
        str | None, typer.Option(help="your name in the record: human:NAME (default: $USER)")
    ] = None,
    host: Annotated[str, typer.Option(help="address the page is served on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: any free port)")] = 0,
    pace: Annotated[
        int, typer.Option(min=0, help="milliseconds each of the other seats' events is shown")
    ] = 600,
    linger: Annotated[
        float, typer.Option(min=0.0, help="seconds the page stays served after the game (while it is open)")
    ] = 120.0,
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="match seed (default: random; kept secret)")
    ] = None,
    rules: Annotated[str | None, typer.Option(help=RULES_HELP)] = None,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run the bots unsandboxed (only bots you trust)")
    ] = False,
    record: Annotated[bool, typer.Option(help="store the match in the database")] = True,
    logs: Annotated[
        Path | None,
        typer.Option(help="directory for the bots' stdout/stderr logs (default: <ARENA_HOME>/logs/matches)"),
    ] = None,
) -> None:
    """Play one seat against 1-3 bots in the browser: prints the page's address, then referees.

    Your seat is an ordinary client of the referee (the same checks, record and database as a bot
    match); the match is stored (your seat's bot is human:NAME) and replays in the web app.  A
    closed page keeps your seat for --grace seconds; after that you forfeit (disconnected).
    Exit status: 0 when every seat played to the end, 3 when a seat forfeited, 2 when the match
    could not start.
    """
    from arena.hosting import BotSpec, sandbox_choice
    from arena.humanseat.session import PlaySpec
    from arena.humanseat.store import HumanNameError
    from arena.referee import TimeControl

    if not 1 <= len(bots) <= 3:
        raise typer.BadParameter(f"give 1 to 3 bots to play against, got {len(bots)}", param_hint="BOTS")
    refuse_clock_with_unlimited(ctx, unlimited)
    total = players if players is not None else len(bots) + 1
    if total - 1 < len(bots):
        raise typer.BadParameter(
            f"{len(bots)} bots and you make {len(bots) + 1} players, more than --players {total}",
            param_hint="--players",
        )
    if seat >= total:
        raise typer.BadParameter(f"a {total}-player match has seats 0-{total - 1}", param_hint="--seat")
    chosen = parse_rules(rules)
    player = name or _user()
    from arena.store.db import Database, StoreError, arena_home

    db: Database | None = None
    if record:
        try:
            db = Database()
        except StoreError as exc:
            raise fail(f"{exc} (or play without the database: --no-record)") from None
    try:
        refs = [bots[k % len(bots)] for k in range(total - 1)]
        specs, ids = _resolve(db, refs)
        control = TimeControl(unlimited=True) if unlimited else TimeControl(move_time, bank)
        try:
            spec = PlaySpec(
                tuple(BotSpec(s.name, s.command) for s in specs),
                seat,
                player,
                control,
                secret_seed() if seed is None else seed,
                chosen,
                grace=grace,
                open_wait=open_wait,
                sandbox=sandbox_choice(no_sandbox),
            )
        except HumanNameError as exc:
            raise typer.BadParameter(str(exc), param_hint="--name") from None
        from arena.humanseat.session import PlaySession

        session = PlaySession(spec, db=db, version_ids=ids, log_dir=logs or arena_home() / "logs" / "matches")
        try:
            status = run_interruptible(_run(session, host, port, pace, linger))  # SIGTERM too
        except BaseException:  # Ctrl-C, a stop signal: the match was not played to its end
            if db is not None and session.stored is not None:
                from arena.store.tournaments import record_failure

                record_failure(db, session.stored, "interrupted")  # (a finished match stays as it is)
            raise
    finally:
        if db is not None:
            db.close()
    if status:
        raise typer.Exit(status)


def _user() -> str:
    with contextlib.suppress(Exception):
        who = "".join(c for c in getpass.getuser() if c.isalnum() or c in "_.-")
        if who and who[0].isalnum():
            return who[:57]
    return "player"


def _resolve(db: Database | None, refs: list[str]) -> tuple[list[Any], list[int] | None]:
    """The bots (unique names, as ``arena match`` gives them) and their stored version ids."""
    from arena.botref import resolve, stored_version
    from arena.hosting import BotSpec
    from arena.sandbox import BotLaunchError
    from arena.store.db import StoreError

    from .match_cmd import _unique_names

    try:
        resolved = [
            resolve(r, db, no_db="not a registered bot (with --no-record the database is not read)")
            for r in refs
        ]
        ids = None
        if db is not None:
            ids = [v for v in (stored_version(db, r).id for r in resolved) if v is not None]
    except (BotLaunchError, StoreError) as exc:
        raise fail(str(exc), 2) from None
    return _unique_names([BotSpec(r.name, r.command) for r in resolved]), ids


def play_app(db: Database | None, registry: PlayRegistry, pace: int) -> FastAPI:
    """The web app of ``arena play``: the play routes, on the web app when there is a database
    (its replay viewer then shows the stored match), else alone with the static files."""
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles

    from arena.web.export import STATIC
    from arena.web.play_routes import play_router

    if db is not None:
        from arena.web.app import create_app

        app = create_app(db, live=False)  # no warning when an 'arena web' holds the live channel
    else:
        from arena.web.head import HeadAsGet

        app = FastAPI(title="Pool Arena: play", docs_url=None, redoc_url=None, openapi_url=None)
        app.add_middleware(HeadAsGet)  # as the full web app does: HEAD answered like GET
        app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.include_router(play_router(registry, pace_ms=pace))
    return app


async def _run(session: PlaySession, host: str, port: int, pace: int, linger: float) -> int:
    from arena.humanseat.session import PlayRegistry
    from arena.web.connguard import PROXIED, guarded_protocol
    from arena.web.server import bind, make_server, url_of

    from .match_cmd import result_table

    spec, db = session.spec, session.db
    registry = PlayRegistry()
    web_environment()
    registry.add(session)
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise fail(cannot_listen(host, port, exc), 2) from None
    # one game for the person here: no per-address cap (every local user shares 127.0.0.1, and
    # another's connections must not lock the person out of the game; the deadlines still hold)
    server = make_server(play_app(db, registry, pace), http=guarded_protocol(per_address=PROXIED))
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]  # Ctrl-C: ours
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    game: asyncio.Task[Any] | None = None
    try:
        while not server.started:
            if serving.done():
                raise fail(f"the web server did not start: {serving.exception()}", 2)
            await asyncio.sleep(0.02)
        seating = " vs ".join(spec.seating())
        typer.echo(f"{seating}  ({spec.control.describe()}; you play seat {spec.seat})")
        typer.echo(f"play in your browser: {url_of(sock)}{session.path.lstrip('/')}", nl=True)
        game = registry.start(session)
        result = await game
        if result is None:
            typer.echo(f"error: the match could not be played: {session.error}", err=True)
            return 2
        typer.echo("")
        from arena.termui import make_console

        label = f"match {session.stored}" if session.stored else f"match {result.match_id}"
        make_console().print(result_table(result, label))
        for f in result.forfeits:
            typer.echo(f"seat {f.seat} ({result.seats[f.seat].name}) forfeited: {f.reason}: {f.detail}")
        kept = (
            f"stored as match {session.stored} ('arena replays show {session.stored}')"
            if session.stored
            else ""
        )
        typer.echo(f"seed {spec.seed}  {kept}".rstrip())
        await _linger(session, linger)
        return FORFEIT_EXIT if result.forfeits else 0
    finally:
        if game is not None and not game.done():
            game.cancel()  # its host stops the bots and the referee
            with contextlib.suppress(BaseException):
                await game
        server.should_exit = True
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(serving, 5.0)
        sock.close()


async def _linger(session: PlaySession, linger: float) -> None:
    """Keep the page served after the game while it is open (at most ``linger`` seconds), so it
    can show the result; a page that is not open ends it at once."""
    bridge = session.bridge
    deadline = time.monotonic() + linger
    while bridge is not None and time.monotonic() < deadline and bridge.away_for() < 2.0:
        await asyncio.sleep(0.2)
