"""The web server's connection guard (arena/web/connguard.py) over real sockets: a request head
or body that does not arrive in time closes the connection, one address may hold only so many
connections (one more is a 503 read before anything is sent), a slow response is never cut, and
every arena web server uses the guard.  An outside review held 4,000 half-sent requests open for a
minute; at 1,024 open files, 1,100 of them left the server accepting nobody."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, StreamingResponse
from sockkit import read_until_closed

from arena.web.connguard import PER_ADDRESS, PER_ADDRESS_ENV, PROXIED, guarded_protocol, per_address_limit
from arena.web.server import BackgroundServer, make_server


def small_app() -> FastAPI:
    app = FastAPI()

    @app.get("/")
    def index() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.post("/echo")
    async def echo(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(len(await request.body())))

    @app.get("/slow")
    def slow() -> StreamingResponse:
        async def lines() -> AsyncIterator[bytes]:
            for k in range(4):
                yield f"{k}\n".encode()
                await asyncio.sleep(0.8)

        return StreamingResponse(lines(), media_type="text/plain")

    return app


@pytest.fixture
def served() -> Iterator[tuple[str, int]]:
    """The small app behind a guard of 1 s for a head, 2 s for a body, 4 connections an address."""
    server = BackgroundServer(
        small_app(), http=guarded_protocol(head_timeout=1.0, body_timeout=2.0, per_address=4)
    )
    url = server.start()
    try:
        yield "127.0.0.1", int(url.rsplit(":", 1)[1])
    finally:
        server.stop()


def test_a_request_head_that_never_completes_is_closed(served: tuple[str, int]) -> None:
    with socket.create_connection(served) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # no blank line: the head goes on
        took, data = read_until_closed(s)
    assert 0.8 <= took < 6.0 and data == b"", (took, data)


def test_a_connection_that_sends_nothing_is_closed(served: tuple[str, int]) -> None:
    with socket.create_connection(served) as s:
        took, data = read_until_closed(s)
    assert 0.8 <= took < 6.0 and data == b"", (took, data)


def test_a_body_that_never_completes_is_closed(served: tuple[str, int]) -> None:
    with socket.create_connection(served) as s:
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
        took, data = read_until_closed(s)
    assert 1.8 <= took < 8.0 and b"200" not in data, (took, data)


def test_requests_in_time_and_slow_responses_pass(served: tuple[str, int]) -> None:
    with socket.create_connection(served) as s:
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        _took, data = read_until_closed(s)
    assert data.startswith(b"HTTP/1.1 200") and data.endswith(b"\r\n\r\n5"), data
    with socket.create_connection(served) as s:  # 3.2 s of response, longer than both deadlines
        s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        took, data = read_until_closed(s)
    assert took >= 2.4 and b"0\n" in data and b"3\n" in data, (took, data)


def test_one_address_holds_at_most_its_share_of_connections(served: tuple[str, int]) -> None:
    held = [socket.create_connection(served) for _ in range(4)]
    try:
        time.sleep(0.2)  # let the server count them
        with socket.create_connection(served) as extra:
            _took, data = read_until_closed(extra)
        assert data.startswith(b"HTTP/1.1 503 Service Unavailable") and b"Retry-After: 60" in data, data
        assert b"holds 4 connections" in data, data
    finally:
        for s in held:
            s.close()
    time.sleep(0.3)  # closed connections are given back
    with socket.create_connection(served) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        _took, data = read_until_closed(s)
    assert data.startswith(b"HTTP/1.1 200"), data


def test_the_limit_per_address_and_its_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PER_ADDRESS_ENV, raising=False)
    assert per_address_limit() == PER_ADDRESS == 64
    assert per_address_limit(behind_proxy=True) == PROXIED
    monkeypatch.setenv(PER_ADDRESS_ENV, "200")
    assert per_address_limit() == per_address_limit(behind_proxy=True) == 200
    for bad in ("0", "x", "²", "-3"):
        monkeypatch.setenv(PER_ADDRESS_ENV, bad)
        with pytest.raises(ValueError, match=PER_ADDRESS_ENV):
            per_address_limit()


def test_every_web_server_is_guarded() -> None:
    config = make_server(small_app()).config
    assert isinstance(config.http, type) and config.http.__name__ == "GuardedH11Protocol"
    assert config.http.per_address == per_address_limit()  # type: ignore[attr-defined]


def test_addresses_are_counted_as_the_lobby_counts_them() -> None:
    from arena.web.connguard import counted_address

    assert counted_address("203.0.113.7") == "203.0.113.7"
    assert (
        counted_address("2001:db8:1:2:aaaa::1")
        == counted_address("2001:db8:1:2:bbbb::9")
        == "2001:db8:1:2::/64"
    )
    assert counted_address("2001:db8:1:3::1") != counted_address("2001:db8:1:2::1")
    assert counted_address("::1") == "::1" and counted_address("fe80::1%eth0") == "fe80::1"
    assert counted_address("::ffff:198.51.100.4") == "198.51.100.4"
    assert counted_address("unknown") == "unknown"


def test_refused_connections_are_logged_once_a_minute_per_address(
    served: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    """21,971 log lines in 5 s from one client (an outside review): now one a minute."""
    held = [socket.create_connection(served) for _ in range(4)]
    try:
        time.sleep(0.2)
        with caplog.at_level("WARNING", logger="arena.web.connguard"):
            for _ in range(20):
                with socket.create_connection(served) as extra:
                    read_until_closed(extra)
        lines = [r for r in caplog.records if "refused connections from 127.0.0.1" in r.getMessage()]
        assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    finally:
        for s in held:
            s.close()
