"""The submission API (``/api/bots/...``), authenticated by a personal API token:
``Authorization: Bearer arena_...`` (make one on the account page or with ``arena users token``).

Only tokens authenticate here, never the session cookie, so no request from another site can
act through a signed-in browser (no CSRF).  Errors are JSON ``{"error", "detail", "status"}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse, Response

from arena.accounts import apitokens
from arena.accounts.ownership import may_manage
from arena.store.models_accounts import UploadStatus, UserAccount
from arena.submission.files import UploadError
from arena.submission.store import delete_bot, set_status, submit_version

from .app import Problem
from .auth_routes import accounts_of
from .bot_routes import page_or_404, read_upload, version_id
from .connguard import client_address
from .privacy import viewer_keep


class Unauthorized(Problem):
    """No valid token (401)."""

    def __init__(self, detail: str) -> None:
        super().__init__(401, "Unauthorized", detail)


def token_user(request: Request) -> UserAccount | None:
    """The user of the request's bearer token (None without an Authorization header; 401 for a
    bad one)."""
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        raise Unauthorized("use the header 'Authorization: Bearer TOKEN'")
    user = apitokens.token_user(accounts_of(request).db, raw.strip())
    if user is None:
        raise Unauthorized(
            "the token is not valid (revoked, or mistyped): make a new one on your account page"
        )
    return user


def need_user(request: Request) -> UserAccount:
    """The token's user; 401 without one."""
    user = token_user(request)
    if user is None:
        raise Unauthorized("this needs a personal API token: 'Authorization: Bearer TOKEN'")
    return user


def make_router() -> APIRouter:
    """The ``/api/bots`` routes (documented in the OpenAPI schema)."""
    router = APIRouter(prefix="/api", tags=["bots"])

    @router.get("/me")
    def me(request: Request) -> dict[str, Any]:
        """Who the token belongs to."""
        user = need_user(request)
        return {"username": user.username, "is_admin": user.is_admin}

    @router.post("/bots/{name}/versions", status_code=202)
    async def upload(
        request: Request,
        name: str,
        file: Annotated[UploadFile, File(description="the bot's one file: a script or a Linux executable")],
        keep_previous: Annotated[bool, Form(description="keep the current version active as well")] = False,
    ) -> JSONResponse:
        """Upload a new version of your bot ``name`` (made on first upload).  It is validated
        by sandboxed matches against the sample bots; poll its ``status_url`` until ``status``
        is ``active`` or ``rejected`` (with ``reason`` and ``stderr_tail``)."""
        acc = accounts_of(request)
        user = need_user(request)
        acc.limits.upload(user.username, client_address(request))
        data = await read_upload(file)
        try:
            done = submit_version(acc.db, user, name, file.filename or "", data, keep_previous=keep_previous)
        except UploadError as exc:
            raise Problem(exc.status, "Upload refused", str(exc)) from None
        acc.on_upload()
        body = {
            "bot": done.bot,
            "version": done.version.version,
            "sha256": done.version.sha256,
            "status": done.upload.status,
            "status_url": f"/api/bots/{done.bot}/versions/{done.version.version}",
            "page_url": f"/bots/{done.bot}",
        }
        return JSONResponse(body, status_code=202)

    @router.get("/bots/{name}")
    def bot(request: Request, name: str) -> dict[str, Any]:
        """A bot's page as JSON: versions with their validation, recent matches, slowest
        decisions, forfeits (stderr tails only for its owner's token)."""
        acc = accounts_of(request)
        page = page_or_404(acc, name)
        private = may_manage(token_user(request), page.owner_id)
        keep = viewer_keep(request)
        return (page if keep is None else page.public(keep)).to_json(private=private)

    @router.get("/bots/{name}/versions/{version}")
    def version(request: Request, name: str, version: int) -> dict[str, Any]:
        """One version's validation status (``pending``, ``validating``, ``active``,
        ``rejected``, ``retired``), reason, stderr tail (owner only) and validation matches."""
        acc = accounts_of(request)
        page = page_or_404(acc, name)
        private = may_manage(token_user(request), page.owner_id)
        keep = viewer_keep(request)
        page = page if keep is None else page.public(keep)
        for v in page.versions:
            if v.version == version:
                return {"bot": page.name, **v.to_json(private=private)}
        raise Problem(404, "Unknown version", f"{name} has no version {version}")

    @router.post("/bots/{name}/versions/{version}/retire")
    def retire(request: Request, name: str, version: int) -> dict[str, Any]:
        """Retire one of your bot's versions (it plays no more new matches)."""
        acc = accounts_of(request)
        user = need_user(request)
        page = page_or_404(acc, name)
        if not may_manage(user, page.owner_id):
            raise Problem(403, "Forbidden", f"only the owner of {name} (or an admin) may do that")
        try:
            row = set_status(
                acc.db, version_id(acc, page.id, version), UploadStatus.RETIRED, "retired by its owner"
            )
        except UploadError as exc:
            raise Problem(exc.status, "Cannot retire", str(exc)) from None
        return {"bot": name, "version": version, "status": row.status}

    @router.delete("/bots/{name}", status_code=204)
    def delete(request: Request, name: str) -> Response:
        """Delete your bot: out of listings and new matches (its past matches stay)."""
        acc = accounts_of(request)
        user = need_user(request)
        page = page_or_404(acc, name)
        if not may_manage(user, page.owner_id):
            raise Problem(403, "Forbidden", f"only the owner of {name} (or an admin) may do that")
        delete_bot(acc.db, page.id)
        return Response(status_code=204)

    return router
