"""The per-address limits of ``arena serve``'s app count an IPv6 client as its /64, as the
connection count does (``arena/web/connguard.py``): one host usually owns a whole /64, and each
of its addresses counted whole had limits of its own (sign-ins, sign-ups, uploads, web games).
Driven through the app's ASGI interface with the client's address set, as uvicorn sets it."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI

from arena.accounts.ratelimit import Limits, RateLimiter
from arena.humanseat.session import PlayRegistry, PlaySession
from arena.humanseat.starter import ADDRESS_FIELD
from arena.serve.webapp import serve_app
from arena.store.db import Database
from arena.web.auth_routes import Accounts
from arena.web.play_routes import play_router

ONE_HOST = [f"2001:db8:1:2::{n:x}" for n in range(1, 9)]  # eight addresses of one /64


def _post(app: Any, path: str, fields: dict[str, str], client: str) -> int:
    """POST ``fields`` as a form from ``client``; the answer's status."""
    body = urlencode(fields).encode()
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
        "query_string": b"", "client": (client, 40000), "server": ("test", 80),
        "headers": [
            (b"host", b"test"), (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(body)).encode()), (b"cookie", b"arena_csrf=forms-token"),
        ],
    }  # fmt: skip
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def test_failed_sign_ins_from_one_ipv6_host_share_one_address_limit(db: Database) -> None:
    per_address = RateLimiter(3, 1 / 600)
    limits = Limits(
        RateLimiter(10, 1), RateLimiter(10, 1), RateLimiter(100, 1), per_address, RateLimiter(100, 1)
    )
    app = serve_app(db, Accounts(db, limits=limits))
    wrong = {"password": "wrong password", "csrf_token": "forms-token"}
    statuses = [_post(app, "/login", {"username": f"user{n}", **wrong}, a) for n, a in enumerate(ONE_HOST)]
    assert statuses == [401] * 3 + [429] * 5, statuses  # each address its own bucket: 401 every time
    # another /64 is another client
    assert (
        _post(
            app,
            "/login",
            {"username": "x1", "password": "wrong", "csrf_token": "forms-token"},
            "2001:db8:1:3::1",
        )
        == 401
    )


def test_web_games_are_counted_per_ipv6_host() -> None:
    seen: list[str] = []

    async def starter(user: Any, fields: dict[str, str]) -> PlaySession:
        seen.append(fields[ADDRESS_FIELD])
        raise ValueError("not started in this test")

    app = FastAPI()
    app.include_router(play_router(PlayRegistry(), current_user=lambda: "someone", starter=starter))
    assert _post(app, "/play/new", {"bot": "random"}, ONE_HOST[0]) == 400
    assert _post(app, "/play/new", {"bot": "random"}, "203.0.113.7") == 400
    assert seen == ["2001:db8:1:2::/64", "203.0.113.7"]
