"""The app ``arena serve`` serves: the viewer of ``arena web`` plus accounts, uploads, bot pages
and the submission API, with a size guard on every request body (uploads and forms)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from arena.accounts.ownership import owned_bots
from arena.accounts.ratelimit import RateLimited
from arena.safetext import small_int
from arena.store.db import Database
from arena.store.models_accounts import UserAccount
from arena.submission.files import max_upload_bytes, too_large_message
from arena.web import api_submit, auth_routes, bot_routes
from arena.web.app import Problem, create_app
from arena.web.auth_routes import Accounts, render
from arena.web.connguard import client_address
from arena.web.privacy import Keep
from arena.web.problems import is_api, problem_json, sign_in_first, too_many

UPLOAD_PATHS = re.compile(r"^/(submit|api/bots/[^/]+/versions)/?$")
FORM_OVERHEAD = 64 * 1024  # multipart headers and the small fields around the file
FORM_LIMIT = 64 * 1024  # every other request body (forms, JSON posts): far above any real one

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class UploadSizeGuard:
    """Bound every request body before it is read (a request of any method with a body).

    Uploads (``UPLOAD_PATHS``): 411 without a Content-Length, 413 over the upload limit plus the
    form's overhead (a JSON error for API clients, the upload form with the error for a browser's
    post to ``/submit``), and an upload the route would refuse anyway is not read either: 401
    without a valid API token, the sign-in page without a session, 429 over the upload rate
    limit (:func:`_refused_unread`; the route refused them only after the whole body had come,
    up to the upload limit a request).  Every other request: 413 when its
    Content-Length is over ``FORM_LIMIT``; a body without a length (chunked) is read up to
    ``FORM_LIMIT`` and answered 413 past it, else handed on as it came.  uvicorn itself never
    delivers more than a stated Content-Length.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        size = small_int(headers.get("content-length", ""))  # None: missing or not a number
        upload = bool(UPLOAD_PATHS.match(scope["path"]))
        limit = max_upload_bytes() + FORM_OVERHEAD if upload else FORM_LIMIT
        if upload and size is None:
            await _answer(scope, send, 411, "Length required", "send the upload with a Content-Length header")
            return
        if size is not None and size > limit:
            if upload:
                told = too_large_message(size)
                if _wants_form(scope, headers):
                    await _form_answer(scope, receive, send, told)
                else:
                    await _answer(scope, send, 413, "Upload too large", told)
            else:
                told = f"the request body is {size} bytes, over the {limit} bytes limit"
                await _answer(scope, send, 413, "Request too large", told)
            return
        if upload and (refused := await run_in_threadpool(_refused_unread, scope)) is not None:
            await refused(scope, receive, send)
            return
        if size is None and "transfer-encoding" in headers:
            receive = await _bounded(receive, limit)
            if receive is _TOO_LARGE:
                await _answer(scope, send, 413, "Request too large", f"the body is over {limit} bytes")
                return
        await self.app(scope, receive, send)


def _refused_unread(scope: Scope) -> Response | None:
    """The answer to an upload its route would refuse whatever its body, given before the body is
    read (None: the route reads it): 401 for the API without a valid token, the sign-in redirect
    for the web form without a session, 429 when the user or the address is over the upload
    limit (nothing counted here), as the routes answer."""
    request = Request(scope)
    if is_api(request):
        try:
            name = api_submit.need_user(request).username
        except Problem as exc:
            return problem_json(exc.status, exc.title, exc.detail)
    else:
        signed = auth_routes.current_user(request)
        if signed is None:
            return sign_in_first(request, str(scope["path"]))
        name = signed.user.username
    wait = auth_routes.accounts_of(request).limits.upload_wait(name, client_address(request))
    if wait <= 0:
        return None
    return too_many(auth_routes.page_templates, request, RateLimited("uploads", wait))


def _wants_form(scope: Scope, headers: dict[str, str]) -> bool:
    """Whether an oversized upload came from the web form (answered with the form again) rather
    than from an API client (``/api/...``, or a client that asks for JSON and not HTML)."""
    if str(scope["path"]).startswith("/api/"):
        return False
    accept = headers.get("accept", "").lower()
    return "text/html" in accept or "application/json" not in accept


async def _form_answer(scope: Scope, receive: Receive, send: Send, told: str) -> None:
    """The upload form again (status 413) with ``told`` as its error, as for any other refused
    upload; the body is not read (the bot's name in it is lost: the form comes back empty)."""
    request = Request(scope, receive)
    mb = max_upload_bytes() / 1e6
    message = f"{told}; nothing was uploaded: choose a smaller file (at most {mb:g} MB)"
    response = await run_in_threadpool(
        render, request, "submit.html", 413, error=message, name="", limit_mb=mb, nav="submit"
    )
    await response(scope, receive, send)


async def _too_large() -> Message:
    return {"type": "http.disconnect"}


_TOO_LARGE: Receive = _too_large


async def _bounded(receive: Receive, limit: int) -> Receive:
    """The whole body read (up to ``limit`` bytes) and a ``receive`` that hands it on;
    ``_TOO_LARGE`` past the limit (nothing more is read)."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit:
            return _TOO_LARGE
        if not message.get("more_body", False):
            break

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay


async def _answer(scope: Scope, send: Send, status: int, title: str, detail: str) -> None:
    """The JSON refusal sent straight to ``send``; nothing more of the request body is read."""

    async def nothing() -> Message:
        return {"type": "http.disconnect"}

    await problem_json(status, title, detail)(scope, nothing, send)


def serve_app(db: Database, accounts: Accounts | None = None) -> FastAPI:
    """The full app over a writable database (the accounts' settings default to open sign-up)."""
    app = create_app(db)
    app.description = (
        "Pool Arena: leaderboard, tournaments, matches, replays, and bot submission. Upload a bot "
        "with POST /api/bots/{name}/versions and a personal API token (Authorization: Bearer TOKEN)."
    )
    auth_routes.install(app, accounts or Accounts(db))
    app.include_router(bot_routes.make_router())
    app.include_router(api_submit.make_router())
    from arena.web.play_routes import accounts_play_router  # "play against this bot" (arena play's page)

    app.include_router(accounts_play_router(db))
    app.add_middleware(UploadSizeGuard)
    app.state.stderr_viewer = lambda request: stderr_viewer(db, request)
    return app


def stderr_viewer(db: Database, request: Request) -> Keep | None:
    """Whose stderr the request's user may see (arena/web/privacy.py): an admin every bot's
    (None), a user the bots they own, anybody else none.  The user is the bearer token's
    (a bad token counts as nobody here; the route itself answers 401) or the session's."""
    user: UserAccount | None = None
    if request.headers.get("authorization"):
        try:
            user = api_submit.token_user(request)
        except Problem:
            user = None
    else:
        signed = auth_routes.current_user(request)
        user = signed.user if signed else None
    if user is None or user.id is None:
        return lambda _name: False
    if user.is_admin:
        return None
    mine = {b.name for b in owned_bots(db, user.id)}
    return lambda name: name in mine
