"""Run the arena server: the web app (uvicorn), the background services and, when asked, the lobby.

One asyncio loop in the main thread serves the web app and the lobby; each background service
works in its own thread with its own match workers (see :mod:`arena.serve.services`).  SIGINT,
SIGTERM and SIGHUP stop everything in order: the web server stops accepting and finishes its
requests, the lobby stops (its matches in flight are recorded as failed, interrupted), then
every service stops, all at once (its matches in flight are abandoned and played again at the
next start).  A second signal ends the process at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import uvicorn

from arena.lifecycle import STOP_SIGNALS, exit_at_once, thread_stacks
from arena.lobby import Lobby, LobbyConfig
from arena.store.db import Database
from arena.store.owners import reap_abandoned
from arena.web.auth_routes import Accounts
from arena.web.connguard import guarded_protocol

from .services import SERVICES, BackgroundService, ServeContext
from .webapp import serve_app

log = logging.getLogger(__name__)


@dataclass
class ServeOptions:
    """What ``arena serve`` runs."""

    jobs: int = 1
    cluster: str | None = None
    sandbox_off: bool = False
    signup: bool = True
    secure_cookies: bool = False
    lobby: LobbyConfig | None = None
    duration: float = 0.0  # stop after this many seconds (0: until stopped)
    forwarded_allow_ips: str | None = None  # proxies trusted for X-Forwarded-For (None: none)


@dataclass
class ServeOutcome:
    """How a run ended: the stop signal (if any), and the lobby's counts."""

    signum: int | None = None
    lobby_played: int | None = None
    lobby_cut: int = 0
    errors: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)  # services that did not stop in time


SLOW_STOP = 10.0  # seconds: a service that takes longer to stop is named in the log


async def _stop_service(service: BackgroundService, ctx: ServeContext) -> None:
    """Stop ``service``; one that takes over :data:`SLOW_STOP` seconds is named in the log, with
    where this process's threads are at that moment (what its stop is waiting for)."""
    started = time.monotonic()
    stopping = asyncio.ensure_future(asyncio.to_thread(service.stop))
    done, _ = await asyncio.wait({stopping}, timeout=SLOW_STOP)
    if not done:
        where = thread_stacks()
        ctx.log(f"{service.name}: still stopping after {SLOW_STOP:.0f} s; the threads are at:\n{where}")
    await stopping
    took = time.monotonic() - started
    if took > SLOW_STOP:
        ctx.log(f"{service.name}: took {took:.0f} s to stop")


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: the runner handles the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def run(
    db: Database,
    sock: socket.socket,
    options: ServeOptions,
    ctx: ServeContext,
    *,
    on_ready: Callable[[list[BackgroundService], Lobby | None, str | None], None] = lambda _s, _l, _a: None,
) -> ServeOutcome:
    """Serve until a stop signal (or ``options.duration``); see the module docstring."""
    outcome = ServeOutcome()
    reaped = reap_abandoned(db)  # web games and validations of a server that was killed
    if reaped:
        log.warning("marked %d stand-alone matches failed: their process was gone (killed?)", len(reaped))
    services = [s for s in (factory(ctx) for factory in SERVICES) if s is not None]
    wake = [getattr(s, "wake", None) for s in services]
    wakers = [w for w in wake if callable(w)]

    def woken() -> None:
        for w in wakers:
            w()

    accounts = Accounts(db, signup=options.signup, secure_cookies=options.secure_cookies, on_upload=woken)
    app = serve_app(db, accounts)
    app.state.services = services
    trusted = options.forwarded_allow_ips  # X-Forwarded-For only from these proxies (F5: else forgeable)
    config = uvicorn.Config(
        app,
        http=guarded_protocol(behind_proxy=trusted is not None),  # request deadlines, connections per address
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=trusted is not None,
        forwarded_allow_ips=trusted or "",
    )
    server = _Server(config)
    done = asyncio.Event()
    lobby = Lobby(db, options.lobby, log=ctx.log) if options.lobby is not None else None

    def stop(signum: int | None) -> None:
        if signum is not None:
            if outcome.signum is not None:
                _again(signum, None)
            outcome.signum = signum
        server.should_exit = True
        if lobby is not None:
            lobby.stop()
        done.set()

    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    handled = [sig for sig, old in previous.items() if old != signal.SIG_IGN]  # nohup: stays ignored
    for sig in handled:
        loop.add_signal_handler(sig, stop, sig)
    started: list[BackgroundService] = []
    lobby_task: asyncio.Task[int] | None = None
    web = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for s in services:
            s.start()
            started.append(s)
        address = None
        if lobby is not None:
            address = await lobby.start()
            lobby_task = asyncio.create_task(lobby.run())
        while not server.started and not web.done():
            await asyncio.sleep(0.02)
        on_ready(started, lobby, address)
        if options.duration:
            loop.call_later(options.duration, stop, None)
        waiters: set[asyncio.Future[object]] = {asyncio.ensure_future(done.wait()), web}  # type: ignore[arg-type]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        server.should_exit = True
        if lobby is not None:
            lobby.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(web, timeout=30)
        if lobby is not None:
            try:
                if lobby_task is not None:
                    outcome.lobby_played = await lobby_task
            except Exception as exc:
                outcome.errors.append(f"lobby: {type(exc).__name__}: {exc}")
            finally:
                outcome.lobby_cut = lobby.interrupted
                await lobby.close()
        await asyncio.gather(*(_stop_service(s, ctx) for s in started))  # at once: each waits on its own
        outcome.stuck = [s.name for s in started if s.alive()]
        for sig in handled:
            loop.remove_signal_handler(sig)  # which leaves the signal's default action (death)
            if outcome.signum is not None:  # stopping: a further signal ends it at once, with its line
                signal.signal(sig, _again)
            else:
                signal.signal(sig, previous[sig] if previous[sig] is not None else signal.SIG_DFL)
    return outcome


def _again(signum: int, _frame: object) -> None:
    """A further stop signal once ``arena serve`` has stopped serving and is on its way out (a
    closed terminal's second SIGHUP): end at once with its line and 128 + the signal; the
    default action restored by the event loop killed it without either."""
    exit_at_once(signum, "the next 'arena serve' goes on with the ladder where it was")
