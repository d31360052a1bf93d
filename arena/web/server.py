"""Serving the web app with uvicorn on a socket we bind ourselves (clear errors, real port)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import uvicorn
from fastapi import FastAPI

from .connguard import guarded_protocol


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port); ``OSError`` if taken."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _type, _proto, _name, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port/`` for a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def make_server(
    app: FastAPI, *, log_level: str = "warning", http: type[asyncio.Protocol] | None = None
) -> uvicorn.Server:
    """A uvicorn server for ``app`` (without its own signal handlers when not in the main thread),
    its connections guarded (``http``, default :func:`arena.web.connguard.guarded_protocol`:
    request deadlines, connections per address)."""
    config = uvicorn.Config(
        app,
        http=http or guarded_protocol(),
        log_level=log_level,
        access_log=False,
        lifespan="off",
        proxy_headers=False,  # the peer's address is the client's
    )
    return uvicorn.Server(config)


def close_live_hub(app: FastAPI) -> None:
    """Close the app's live hub, if it has one (:mod:`arena.live.hub`): its socket file goes."""
    hub = getattr(app.state, "live_hub", None)
    if hub is not None:
        hub.close()


def serve(app: FastAPI, sock: socket.socket, *, log_level: str = "warning") -> None:
    """Serve until interrupted (Ctrl-C), then close the app's live hub."""
    try:
        make_server(app, log_level=log_level).run(sockets=[sock])
    finally:
        close_live_hub(app)


class BackgroundServer:
    """The app served from a thread (tests, benchmarks): ``with BackgroundServer(app) as url: ...``."""

    def __init__(
        self, app: FastAPI, host: str = "127.0.0.1", port: int = 0, http: type[asyncio.Protocol] | None = None
    ) -> None:
        self.app = app
        self.sock = bind(host, port)
        self.url = url_of(self.sock).rstrip("/")
        self.server = make_server(app, http=http)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self, timeout: float = 20.0) -> str:
        """Start serving; return the base URL (no trailing slash) once it accepts requests."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web server did not start")
            time.sleep(0.02)
        return self.url

    def stop(self) -> None:
        """Stop serving, wait for the thread and close the app's live hub."""
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        close_live_hub(self.app)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
