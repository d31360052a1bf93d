"""Sign up, sign in/out, the account page and personal API tokens; the helpers every
account-aware route uses (:func:`current_user`, :func:`check_csrf`, :func:`render`).

Installed by ``arena serve`` only (``arena web`` stays a read-only viewer): :func:`install` puts
an :class:`Accounts` on ``app.state.accounts``.  The session cookie is HttpOnly and
SameSite=Lax, and Secure when the request came over HTTPS (or always, with ``secure_cookies``).
Every POST form carries a CSRF token: the session's secret when signed in, else the value of a
double-submit cookie; a missing or wrong one is a 403 before anything else happens.

A new API token is made by a POST that redirects (303) to ``/account`` (Post/Redirect/Get: a
reload does not make a second one).  The token waits for that GET in the server's memory, keyed
by the login session's secret (:class:`FreshTokens`): it is shown once, never put in a URL, a
cookie or a log.  Lost if the server restarts in between (the token is then listed but never shown:
revoke it and make another).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.accounts import apitokens, sessions
from arena.accounts.errors import AccountError, TooManyTokensError
from arena.accounts.ownership import owned_bots
from arena.accounts.ratelimit import Limits, RateLimited
from arena.accounts.sessions import CSRF_COOKIE, CSRF_FIELD, SESSION_COOKIE, SESSION_TTL, SignedIn
from arena.accounts.users import authenticate, create_user
from arena.store.db import Database
from arena.store.models_accounts import UserAccount

from .app import Problem, make_templates
from .connguard import client_address
from .problems import sign_in_first, too_many


class FreshTokens:
    """New API tokens waiting to be shown once, by login session (in memory; each expires after
    ``ttl`` seconds when its page is never fetched).  A session is named by its CSRF secret
    (:attr:`SignedIn.csrf`), unique to it, never by its row id: SQLite gives a new row the id of a
    deleted newest one, so a token made just before its session ended was shown to the next
    session signed in, another user's."""

    def __init__(self, ttl: float = 600.0) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[str, float]] = {}

    def put(self, session: str, raw: str) -> None:
        """Keep ``raw`` for the next :meth:`take` of the session (replaces an unshown one)."""
        now = time.monotonic()
        with self._lock:
            self._waiting = {k: v for k, v in self._waiting.items() if v[1] > now}
            self._waiting[session] = (raw, now + self.ttl)

    def take(self, session: str) -> str | None:
        """The session's waiting token, removed (None when there is none or it expired)."""
        with self._lock:
            found = self._waiting.pop(session, None)
        return found[0] if found is not None and found[1] > time.monotonic() else None


@dataclass
class Accounts:
    """The account settings of a served app (``app.state.accounts``)."""

    db: Database
    limits: Limits = field(default_factory=Limits.default)
    signup: bool = True  # anyone may make an account (else only the admin, from the CLI)
    secure_cookies: bool = False  # Secure cookies even over plain HTTP (behind a TLS proxy)
    on_upload: Callable[[], None] = lambda: None  # told after every accepted upload
    fresh_tokens: FreshTokens = field(default_factory=FreshTokens)  # shown once, by the next GET


def accounts_of(request: Request) -> Accounts:
    """The app's :class:`Accounts` (a 404 when accounts are not enabled: ``arena web``)."""
    acc = getattr(request.app.state, "accounts", None)
    if not isinstance(acc, Accounts):
        raise Problem(404, "Not found", f"there is no page at {request.url.path} (accounts are off)")
    return acc


def current_user(request: Request) -> SignedIn | None:
    """The signed-in user of this request (its session cookie), or None.  Usable as a FastAPI
    dependency: ``signed: SignedIn | None = Depends(current_user)``."""
    if not hasattr(request.state, "signed_in"):
        acc = getattr(request.app.state, "accounts", None)
        signed = None
        if isinstance(acc, Accounts):
            signed = sessions.session_user(acc.db, request.cookies.get(SESSION_COOKIE))
        request.state.signed_in = signed
    result: SignedIn | None = request.state.signed_in
    return result


def require_user(request: Request) -> SignedIn:
    """The signed-in user, or a redirect to the sign-in page (raised as a Problem for APIs)."""
    signed = current_user(request)
    if signed is None:
        raise SignInFirst(request.url.path)
    return signed


class SignInFirst(Exception):
    """The page needs a signed-in user: answered with a redirect to ``/login?next=...``."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(path)


def csrf_for(request: Request) -> str:
    """The CSRF token the forms of this page carry (see the module docstring)."""
    signed = current_user(request)
    if signed is not None:
        return signed.csrf
    token = request.cookies.get(CSRF_COOKIE) or getattr(request.state, "new_csrf", None)
    if not token:
        token = sessions.new_csrf()
        request.state.new_csrf = token
    return str(token)


def check_csrf(request: Request, given: str | None) -> None:
    """403 unless ``given`` is this request's CSRF token (the session's secret when signed in,
    else the double-submit cookie)."""
    signed = current_user(request)
    expected = signed.csrf if signed is not None else request.cookies.get(CSRF_COOKIE)
    if not sessions.same(expected, given):
        raise Problem(
            403,
            "Forbidden",
            "the form's security token is missing or out of date: reload the page and submit it again",
        )


def _secure(request: Request) -> bool:
    acc = getattr(request.app.state, "accounts", None)
    forced = isinstance(acc, Accounts) and acc.secure_cookies
    return forced or request.url.scheme == "https"


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int | None) -> None:
    """Set an HttpOnly, SameSite=Lax cookie (Secure over HTTPS)."""
    response.set_cookie(
        name, value, max_age=max_age, httponly=True, samesite="lax", secure=_secure(request), path="/"
    )


page_templates = make_templates()  # the accounts' pages and their refusals


def render(request: Request, template: str, code: int = 200, **context: Any) -> HTMLResponse:
    """A page of the accounts area: the template with the user and the CSRF token."""
    csrf = csrf_for(request)
    response = page_templates.TemplateResponse(
        request,
        template,
        {"user": current_user(request), "csrf": csrf, "csrf_field": CSRF_FIELD, **context},
        status_code=code,
    )
    fresh = getattr(request.state, "new_csrf", None)
    if fresh:
        set_cookie(request, response, CSRF_COOKIE, str(fresh), None)
    return response


def safe_next(target: str | None) -> str:
    """A local path to go to after signing in (anything else: the account page)."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/account"


def _signed_in_response(request: Request, user: UserAccount, target: str) -> Response:
    acc = accounts_of(request)
    assert user.id is not None
    raw, _csrf = sessions.start_session(acc.db, user.id)
    response = RedirectResponse(target, status_code=303)
    set_cookie(request, response, SESSION_COOKIE, raw, int(SESSION_TTL.total_seconds()))
    return response


def make_router() -> APIRouter:
    """The sign-up, sign-in and account routes."""
    router = APIRouter(include_in_schema=False)

    @router.get("/signup", response_class=HTMLResponse)
    def signup_form(request: Request) -> Response:
        acc = accounts_of(request)
        return render(
            request, "account_signup.html", signup=acc.signup, error=None, username="", nav="account"
        )

    @router.post("/signup")
    def signup(
        request: Request,
        username: str = Form(""),
        password: str = Form(""),
        password2: str = Form(""),
        csrf_token: str = Form(""),
    ) -> Response:
        acc = accounts_of(request)
        check_csrf(request, csrf_token)
        if not acc.signup:
            raise Problem(403, "Sign-up is closed", "ask the arena's admin for an account")
        address = client_address(request)
        attempt = acc.limits.begin_login("signup:" + address, address)  # sign-ups count per address
        error = "the two passwords differ" if password != password2 else None
        if error is None:
            try:
                user = create_user(acc.db, username, password)
            except AccountError as exc:
                error = str(exc)
            else:
                return _signed_in_response(request, user, "/account")
        attempt.forgive()  # no account made: not counted
        return render(
            request, "account_signup.html", 400, signup=True, error=error, username=username, nav="account"
        )

    @router.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str | None = None) -> Response:
        return render(
            request, "account_login.html", error=None, username="", next=safe_next(next), nav="account"
        )

    @router.post("/login")
    def login(
        request: Request,
        username: str = Form(""),
        password: str = Form(""),
        csrf_token: str = Form(""),
        next: str = Form(""),
    ) -> Response:
        acc = accounts_of(request)
        check_csrf(request, csrf_token)
        name = "user:" + username.strip().lower()[:64]  # never a sign-up's key (signup:ADDRESS)
        address = client_address(request)
        attempt = acc.limits.begin_login(name, address)
        user = authenticate(acc.db, username, password)
        if user is None:
            return render(
                request,
                "account_login.html",
                401,
                error="wrong username or password",
                username=username,
                next=safe_next(next),
                nav="account",
            )
        attempt.forgive()  # a sign-in that succeeds is not counted
        return _signed_in_response(request, user, safe_next(next))

    @router.post("/logout")
    def logout(request: Request, csrf_token: str = Form("")) -> Response:
        acc = accounts_of(request)
        check_csrf(request, csrf_token)
        sessions.end_session(acc.db, request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/leaderboard", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    @router.get("/account", response_class=HTMLResponse)
    def account(request: Request) -> Response:
        acc = accounts_of(request)
        signed = require_user(request)
        assert signed.user.id is not None
        new_token = acc.fresh_tokens.take(signed.csrf)  # made by the POST just before
        response = render(
            request,
            "account.html",
            bots=owned_bots(acc.db, signed.user.id),
            tokens=apitokens.list_tokens(acc.db, signed.user.id),
            new_token=new_token,
            nav="account",
        )
        if new_token is not None:
            response.headers["Cache-Control"] = "no-store"  # the token is shown once
        return response

    @router.post("/account/tokens")
    def make_token(request: Request, name: str = Form("cli"), csrf_token: str = Form("")) -> Response:
        acc = accounts_of(request)
        signed = require_user(request)
        check_csrf(request, csrf_token)
        assert signed.user.id is not None
        try:
            raw = apitokens.new_token(acc.db, signed.user.id, name.strip() or "cli")
        except TooManyTokensError as exc:
            raise Problem(409, "Too many tokens", str(exc)) from None
        acc.fresh_tokens.put(signed.csrf, raw)
        return RedirectResponse("/account#new-token", status_code=303)  # a reload makes no second one

    @router.post("/account/tokens/{token_id}/revoke")
    def revoke(request: Request, token_id: int, csrf_token: str = Form("")) -> Response:
        acc = accounts_of(request)
        signed = require_user(request)
        check_csrf(request, csrf_token)
        assert signed.user.id is not None
        if not apitokens.revoke_token(acc.db, signed.user.id, token_id):
            raise Problem(404, "Unknown token", f"you have no token {token_id}")
        return RedirectResponse("/account", status_code=303)

    return router


def install(app: FastAPI, accounts: Accounts) -> None:
    """Enable accounts on ``app``: its state, the redirect for pages that need a user, the 429
    answer of rate limits, and the routes."""
    app.state.accounts = accounts

    @app.exception_handler(SignInFirst)
    async def _sign_in(request: Request, exc: SignInFirst) -> Response:
        return sign_in_first(request, exc.path)

    @app.exception_handler(RateLimited)
    async def _limited(request: Request, exc: RateLimited) -> Response:
        return too_many(page_templates, request, exc)

    app.include_router(make_router())
