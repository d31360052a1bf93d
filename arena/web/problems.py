"""The one shape of a refused web request, for every route and guard that refuses one.

An API client (a path under ``/api/``, or a route's own JSON endpoints) gets
``{"error": title, "detail": detail, "status": status}`` with that status; a browser gets the
``error.html`` page with the same three fields (and ``links``, if any, listed under it).  Extra
``headers`` (``Retry-After``, ``Allow``, ``Connection``) go on either answer.

The app's exception handlers, the routers' own refusals and the upload guard in front of the
app (``arena.serve.webapp``, which answers before any handler exists for the request) all build
their answers here, so a 401 or a 429 reads the same whichever of them gave it.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from arena.accounts.ratelimit import RateLimited

TOO_MANY = "Too many requests"


def is_api(request: Request) -> bool:
    """Whether ``request`` came to the JSON API (its refusals are JSON, never a page)."""
    return request.url.path.startswith("/api/")


def problem_json(status: int, title: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON refusal: ``{"error": title, "detail": detail, "status": status}``."""
    return JSONResponse({"error": title, "detail": detail, "status": status}, status, headers=headers)


def problem(
    templates: Jinja2Templates,
    request: Request,
    status: int,
    title: str,
    detail: str,
    *,
    api: bool,
    headers: dict[str, str] | None = None,
    links: tuple[str, ...] = (),
) -> Response:
    """:func:`problem_json` when ``api``, else the error page rendered by ``templates`` (any set
    that has ``error.html``), ``links`` listed under its text."""
    if api:
        return problem_json(status, title, detail, headers)
    context = {"title": title, "detail": detail, "status": status, "links": links}
    return templates.TemplateResponse(request, "error.html", context, status_code=status, headers=headers)


def sign_in_first(request: Request, path: str) -> Response:
    """A request that needs a signed-in user and has none: a 401 for the API, else the sign-in
    page, which comes back to ``path`` once signed in."""
    if is_api(request):
        return problem_json(401, "Unauthorized", "sign in first")
    return RedirectResponse(f"/login?next={quote(path)}", status_code=303)


def too_many(templates: Jinja2Templates, request: Request, exc: RateLimited) -> Response:
    """A 429 for a rate limit, with ``Retry-After`` in whole seconds."""
    headers = {"Retry-After": str(exc.retry_after)}
    return problem(templates, request, 429, TOO_MANY, str(exc), api=is_api(request), headers=headers)
