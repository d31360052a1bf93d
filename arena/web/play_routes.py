"""The play page's routes: a person plays a seat through :class:`~arena.humanseat.bridge.HumanBridge`.

:func:`play_router` builds an :class:`~fastapi.APIRouter` that mounts into any FastAPI app (``arena
play``'s own server, ``arena serve``'s web app).  Every route of a game takes the seat's key (the
link ``arena play`` prints carries it); a wrong key is 403 and nothing else is said:

* ``GET /play/{id}?key=K``: the page (the replay viewer's board made interactive, ``play.js``);
* ``GET /play/{id}/events?key=K&since=N``: server-sent events, one JSON snapshot (see
  :meth:`HumanBridge.snapshot`) per change, comments as keep-alives; while one is open the page
  counts as present (closing the last starts the reconnect grace);
* ``GET /play/{id}/state?key=K&since=N``: the same snapshot once (polling; counts as presence);
* ``POST /play/{id}/action``: JSON or a form with ``key``, ``seat``, ``request_id``, ``action``:
  200 ``{"ok": true}``, or the bridge's refusal (:class:`~arena.humanseat.bridge.PostError`) as
  ``{"error", "detail", "status"}`` with its status (403, 409, 422; 400 for a malformed post).

Every post is small: its body is refused before it is read when its Content-Length is over
:data:`MAX_POST_BYTES` (413), and a body without a length (chunked) is read only up to that limit
(413 beyond); an action for a game that does not exist is 404 before its body is read.  A body that
is not a JSON object or a form (bad UTF-8, too deeply nested, numbers out of range) is 400.

With ``current_user`` (a FastAPI dependency giving the logged-in user or None) and ``starter``
(how to start a game for a user), ``GET /play/new?bot=NAME`` offers "play against this bot" and
``POST /play/new`` starts the game and redirects to its page; without a user it is 401 (with
``csrf``, the form carries the app's token and a post without it is refused).  A starter refusing
with :class:`~arena.humanseat.starter.GameLimitError` (too many games running, too many started) is
a 429 with its message and a ``Retry-After``.
:func:`accounts_play_router` is that router wired to ``arena serve``'s accounts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates

from arena.humanseat.bridge import HumanBridge, PostError
from arena.humanseat.session import PlayRegistry, PlaySession
from arena.humanseat.starter import ADDRESS_FIELD, GameLimitError
from arena.safetext import small_int

from . import problems
from .connguard import client_address
from .export import TEMPLATES, json_for_script
from .viewdata import FORMAT, FORMAT_VERSION, SECRET_SEED, board_data, rules_data

DEFAULT_PACE_MS = 600  # how long each of the other seats' events stays on screen
KEEPALIVE_S = 10.0  # an SSE comment at least this often
WELCOME_WAIT_S = 30.0  # how long the page waits for the referee's Welcome before it gives up
MAX_POST_BYTES = 16 * 1024  # a post's body (an action, the new-game form) is far smaller

Starter = Callable[[Any, dict[str, str]], Awaitable[PlaySession]]
"""``starter(user, form)``: start a game for ``user`` from the form (``bot``, ``players``, ``seat``);
:class:`ValueError` or :class:`LookupError` with a message for a form it cannot start."""


@dataclass(frozen=True)
class Csrf:
    """How the app protects its forms: ``token(request)`` for the form, ``check(request, given)``
    raising when the posted token is wrong, and the form field's name."""

    token: Callable[[Request], str]
    check: Callable[[Request, str | None], None]
    field: str = "csrf_token"


def _no_user() -> None:
    return None


def play_router(
    registry: PlayRegistry,
    *,
    current_user: Callable[..., Any] | None = None,
    starter: Starter | None = None,
    csrf: Csrf | None = None,
    pace_ms: int = DEFAULT_PACE_MS,
    name_of: Callable[[Any], str] | None = None,
) -> APIRouter:
    """The play routes over ``registry`` (see the module docstring).  ``name_of(user)``: the
    signed-in user's name as a game's owner; a game's page opened by its owner without the key
    (the 429's list of running games, a typed address) leads to the page with the key."""
    router = APIRouter()
    templates = Jinja2Templates(directory=str(TEMPLATES))
    user_dependency = current_user or _no_user

    def problem(
        request: Request,
        status: int,
        title: str,
        detail: str,
        headers: dict[str, str] | None = None,
        links: tuple[str, ...] = (),
    ) -> Response:
        if status == 413:
            headers = {**(headers or {}), "Connection": "close"}  # the unread body is not awaited
        api = request.url.path.endswith(("/events", "/state", "/action"))
        return problems.problem(
            templates, request, status, title, detail, api=api, headers=headers, links=links
        )

    async def bridge_of(
        request: Request, session_id: str, key: str | None
    ) -> tuple[PlaySession, HumanBridge]:
        session = registry.get(session_id)
        if session is None:
            raise PostError(
                404, "no-game", f"there is no game {session_id!r} here (it ended long ago, or never was)"
            )
        if not session.ready.is_set():
            try:
                await asyncio.wait_for(session.ready.wait(), WELCOME_WAIT_S)
            except TimeoutError:
                raise PostError(
                    503, "not-started", "the game has not started yet: reload in a moment"
                ) from None
        bridge = session.bridge
        if bridge is None:
            raise PostError(503, "failed", f"the game could not start: {session.error or 'unknown error'}")
        bridge.check_key(key)
        await _welcomed(bridge, session)
        return session, bridge

    def since_of(request: Request) -> int:
        raw = request.query_params.get("since", "0")
        try:
            return max(0, int(raw))
        except ValueError:
            raise PostError(400, "bad-since", f"since must be a whole number, got {raw!r}") from None

    if starter is not None:

        @router.get("/play/new", response_class=HTMLResponse, include_in_schema=False)
        async def new_form(request: Request, user: Any = Depends(user_dependency)) -> Response:  # noqa: B008
            if user is None:
                return problem(request, 401, "Log in to play", "log in first: a game is played by a user")
            context = {
                "bot": request.query_params.get("bot", ""),
                "nav": "play",
                "csrf_field": csrf.field if csrf is not None else "",
                "csrf": csrf.token(request) if csrf is not None else "",
            }
            return templates.TemplateResponse(request, "play_new.html", context)

        @router.post("/play/new", include_in_schema=False)
        async def new_game(request: Request, user: Any = Depends(user_dependency)) -> Response:  # noqa: B008
            if user is None:
                return problem(request, 401, "Log in to play", "log in first: a game is played by a user")
            try:
                fields = {k: str(v) for k, v in (await _fields(request)).items()}
            except PostError as exc:
                return problem(request, exc.status, "Cannot start this game", str(exc))
            if csrf is not None:
                csrf.check(request, fields.get(csrf.field))
            fields[ADDRESS_FIELD] = client_address(request)  # an IPv6 address: its /64
            try:
                session = await starter(user, fields)
            except GameLimitError as exc:
                retry = {"Retry-After": str(max(1, round(exc.retry_after)))}
                return problem(request, 429, "Too many games", str(exc), retry, exc.games)
            except (ValueError, LookupError) as exc:
                return problem(request, 400, "Cannot start this game", str(exc))
            return RedirectResponse(session.path, status_code=303)

    @router.get("/play/{session_id}", response_class=HTMLResponse, include_in_schema=False)
    async def page(request: Request, session_id: str, user: Any = Depends(user_dependency)) -> Response:  # noqa: B008
        try:
            session, bridge = await bridge_of(request, session_id, request.query_params.get("key"))
        except PostError as exc:
            mine = registry.get(session_id)
            if (
                exc.code == "bad-key"
                and mine is not None
                and mine.owner is not None
                and user is not None
                and name_of is not None
                and name_of(user) == mine.owner
            ):
                return RedirectResponse(mine.path, status_code=303)  # the owner's own game
            return problem(request, exc.status, "Cannot open this game", str(exc))
        pace = request.query_params.get("pace")
        config = {
            "id": session.id,
            "key": bridge.key,
            "seat": bridge.seat,
            "pace_ms": (small_int(pace) if pace is not None else None) or pace_ms,
            "grace_s": bridge.grace,
        }
        context = {
            "session": session,
            "bridge": bridge,
            "view": _view(bridge),
            "data_json": json_for_script(_view(bridge)),
            "config_json": json_for_script(config),
            "rules_url": "/rules",
            "nav": "play",
        }
        return templates.TemplateResponse(request, "play.html", context)

    @router.get("/play/{session_id}/state", include_in_schema=False)
    async def state(request: Request, session_id: str) -> Response:
        try:
            _, bridge = await bridge_of(request, session_id, request.query_params.get("key"))
            since = since_of(request)
        except PostError as exc:
            return problem(request, exc.status, exc.code, str(exc))
        bridge.page_polled()
        return JSONResponse(bridge.snapshot(since))

    @router.get("/play/{session_id}/events", include_in_schema=False)
    async def events(request: Request, session_id: str) -> Response:
        try:
            _, bridge = await bridge_of(request, session_id, request.query_params.get("key"))
            since = since_of(request)
        except PostError as exc:
            return problem(request, exc.status, exc.code, str(exc))
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(_stream(bridge, since), media_type="text/event-stream", headers=headers)

    @router.post("/play/{session_id}/action", include_in_schema=False)
    async def action(request: Request, session_id: str) -> Response:
        try:
            if registry.get(session_id) is None:  # before the body: nothing to read for no game
                raise PostError(404, "no-game", f"there is no game {session_id!r} here")
            fields = await _fields(request)
            _, bridge = await bridge_of(request, session_id, fields.get("key"))
            seat = _whole(fields.get("seat"), "seat") if fields.get("seat") not in (None, "") else None
            request_id = _whole(fields.get("request_id"), "request_id")
            await bridge.submit(fields.get("key"), seat, request_id, str(fields.get("action") or ""))
        except PostError as exc:
            return problem(request, exc.status, exc.code, str(exc))
        return JSONResponse({"ok": True, "request_id": request_id})

    return router


async def _welcomed(bridge: HumanBridge, session: PlaySession) -> None:
    """Wait until the referee's Welcome has come (the page needs the seating)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WELCOME_WAIT_S
    while bridge.timeline is None:
        if bridge.ended.is_set() or session.done.is_set():
            raise PostError(503, "failed", f"the game ended before it began: {bridge.error or session.error}")
        left = deadline - loop.time()
        if left <= 0:
            raise PostError(
                503, "not-started", "the referee has not welcomed the seat yet: reload in a moment"
            )
        await bridge.changed(bridge.version, min(left, 1.0))


def _view(bridge: HumanBridge) -> dict[str, Any]:
    """The replay viewer's data for the game so far (no seed: it would tell the dice)."""
    states, events = bridge.timeline.view() if bridge.timeline is not None else ([], [])
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "match": None,
        "header": {"seed": SECRET_SEED, "time_control": bridge.time_control},
        "players": bridge.players,
        "seating": list(bridge.seating),
        "rules": rules_data(bridge.rules),
        "board": board_data(),
        "states": states,
        "events": events,
        "result": {},
        "forfeits": [],
    }


async def _stream(bridge: HumanBridge, since: int) -> AsyncIterator[str]:
    """The page's event stream: a snapshot per change (only what is new to it)."""
    bridge.page_opened()
    try:
        version = -1
        while True:
            if bridge.version != version:
                version = bridge.version
                snap = bridge.snapshot(since)
                since = snap["count"]
                yield f"data: {json.dumps(snap, separators=(',', ':'))}\n\n"
            elif not await bridge.changed(version, KEEPALIVE_S):
                yield ": keep-alive\n\n"
    finally:
        bridge.page_closed()


async def _body(request: Request, limit: int = MAX_POST_BYTES) -> bytes:
    """The post's body, at most ``limit`` bytes: :class:`PostError` 413 before reading anything when
    its Content-Length says more, or as soon as a body without a length (chunked) passes the limit;
    400 for a Content-Length that is not a number."""
    length = request.headers.get("content-length")
    if length is not None:
        size = small_int(length.strip())
        if size is None:
            raise PostError(400, "bad-length", f"Content-Length must be a number of bytes, got {length!r}")
        if size > limit:
            raise PostError(
                413, "too-large", f"the post is {size} bytes; a post here is at most {limit} bytes"
            )
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise PostError(413, "too-large", f"the post is over {limit} bytes, the most a post here may be")
    return bytes(body)


async def _fields(request: Request) -> dict[str, Any]:
    """The post's fields, from JSON or a form (urlencoded); :class:`PostError` 400 for anything
    else (bad UTF-8, not an object, nested too deeply), 413 for a body over :data:`MAX_POST_BYTES`."""
    body = await _body(request)
    kind = request.headers.get("content-type", "")
    try:
        if "json" in kind:
            data = json.loads(body or b"{}")
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            return data
        return {k: v[0] for k, v in parse_qs(body.decode("utf-8"), keep_blank_values=True).items()}
    except RecursionError:
        raise PostError(400, "bad-post", "the post's JSON is nested too deeply: send a flat object") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PostError(400, "bad-post", f"the post is not a JSON object or a form: {exc}") from None


def _whole(value: Any, name: str) -> int:
    """``value`` (a JSON integer or a form's digits) as an int; :class:`PostError` 400 for anything
    else (booleans, fractions, numbers like 1e999, lists, objects)."""
    if isinstance(value, (bool, float)) or not isinstance(value, (int, str)):
        raise PostError(400, "bad-post", f"{name} must be a whole number, got {_shown(value)}")
    try:
        return int(value)
    except ValueError:
        raise PostError(400, "bad-post", f"{name} must be a whole number, got {_shown(value)}") from None


def _shown(value: Any) -> str:
    """``value`` for an error message, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def accounts_play_router(db: Any, registry: PlayRegistry | None = None) -> APIRouter:
    """The play routes for ``arena serve``: a signed-in user plays a registered or sample bot
    (:func:`arena.humanseat.starter.bot_starter`), the forms protected by the accounts' CSRF."""
    from arena.accounts.ownership import play_refusal
    from arena.accounts.sessions import CSRF_FIELD
    from arena.humanseat.starter import bot_starter

    from . import auth_routes

    registry = registry or PlayRegistry()

    def name_of(signed: Any) -> str:
        return str(signed.user.username)

    return play_router(
        registry,
        current_user=auth_routes.current_user,
        name_of=name_of,
        starter=bot_starter(
            db,
            registry,
            name_of=name_of,
            refusal=lambda signed, version_id: play_refusal(db, signed.user, version_id),
        ),
        csrf=Csrf(auth_routes.csrf_for, auth_routes.check_csrf, CSRF_FIELD),
    )
