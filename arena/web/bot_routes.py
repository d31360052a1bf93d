"""A bot's own page, the web upload form, and the owner's actions (retire, delete, download).

Anyone may read a bot's page (versions, validation results, recent matches, slowest decisions,
forfeits); only its owner or an admin sees the upload form, the action buttons, the bots'
stderr tails, and may download its files (others get 403; files are never served to them).
Every POST checks the CSRF token first.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import select

from arena.accounts.ownership import may_manage
from arena.accounts.sessions import SignedIn
from arena.ladder.board import BoardRow, ladder_board
from arena.store.bots import artifact_path
from arena.store.models import Bot, BotVersion
from arena.store.models_accounts import UploadStatus
from arena.submission.botpage import BotPage, NoSuchBotError, bot_index, bot_page
from arena.submission.files import UploadError, max_upload_bytes
from arena.submission.store import delete_bot, set_status, submit_version
from arena.submission.validation import OPPONENTS

from .app import Problem
from .auth_routes import Accounts, accounts_of, check_csrf, current_user, render, require_user
from .connguard import client_address
from .privacy import viewer_keep

READ_CHUNK = 1 << 16


async def read_upload(file: UploadFile) -> bytes:
    """The uploaded bytes, at most the upload limit + 1 (so an oversized file is detected
    without reading all of it into memory)."""
    limit = max_upload_bytes()
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await file.read(READ_CHUNK)
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def page_or_404(acc: Accounts, name: str) -> BotPage:
    """The bot's page data; 404 when there is no such bot."""
    try:
        return bot_page(acc.db, name)
    except NoSuchBotError as exc:
        raise Problem(404, "Unknown bot", str(exc)) from None


def managed(acc: Accounts, signed: SignedIn | None, name: str) -> BotPage:
    """The bot's page data when ``signed`` may act on it; else 403 (404 when there is no bot)."""
    page = page_or_404(acc, name)
    if not may_manage(signed.user if signed else None, page.owner_id):
        raise Problem(403, "Forbidden", f"only the owner of {name} (or an admin) may do that")
    return page


def version_id(acc: Accounts, bot_id: int, version: int) -> int:
    """The id of version ``version`` of the bot; 404 when there is none."""
    with acc.db.session() as session:
        v = session.exec(
            select(BotVersion).where(BotVersion.bot_id == bot_id, BotVersion.version == version)
        ).first()
    if v is None or v.id is None:
        raise Problem(404, "Unknown version", f"the bot has no version {version}")
    return v.id


def ladder_rows(acc: Accounts) -> dict[str, BoardRow]:
    """Each bot's ladder standing (the board ``/ladder`` shows, read once): its best-placed
    active version's row, else its best-placed one; none when there is no ladder."""
    board = ladder_board(acc.db)
    found: dict[str, BoardRow] = {}
    for row in sorted(board.rows, key=lambda r: not r.active) if board else []:  # stable: by rank
        found.setdefault(row.bot, row)
    return found


def make_router() -> APIRouter:
    """The bot pages and the upload form."""
    router = APIRouter(include_in_schema=False)

    @router.get("/bots", response_class=HTMLResponse)
    def bots(request: Request) -> Response:
        acc = accounts_of(request)
        return render(request, "bots.html", bots=bot_index(acc.db), ladder=ladder_rows(acc), nav="bots")

    @router.get("/submit", response_class=HTMLResponse)
    def submit_form(request: Request, name: str = "") -> Response:
        require_user(request)
        return render(
            request, "submit.html", error=None, name=name, limit_mb=max_upload_bytes() / 1e6, nav="submit"
        )

    @router.post("/submit")
    async def submit(
        request: Request,
        name: str = Form(""),
        keep_previous: str = Form(""),
        csrf_token: str = Form(""),
        file: Annotated[UploadFile | None, File()] = None,
    ) -> Response:
        acc = accounts_of(request)
        signed = require_user(request)
        check_csrf(request, csrf_token)
        acc.limits.upload(signed.user.username, client_address(request))
        try:
            if file is None or not file.filename:
                raise UploadError("choose the bot's file to upload")
            data = await read_upload(file)
            done = submit_version(
                acc.db, signed.user, name.strip(), file.filename, data, keep_previous=bool(keep_previous)
            )
        except UploadError as exc:
            return render(
                request,
                "submit.html",
                exc.status,
                error=str(exc),
                name=name,
                limit_mb=max_upload_bytes() / 1e6,
                nav="submit",
            )
        acc.on_upload()
        return RedirectResponse(f"/bots/{done.bot}?uploaded={done.version.version}", status_code=303)

    @router.get("/bots/{name}", response_class=HTMLResponse)
    def bot(request: Request, name: str, uploaded: int | None = None) -> Response:
        acc = accounts_of(request)
        page = page_or_404(acc, name)
        signed = current_user(request)
        owner = may_manage(signed.user if signed else None, page.owner_id)
        keep = viewer_keep(request)
        page = page if keep is None else page.public(keep)  # others' stderr lines: owners only
        waiting = any(v.status in (UploadStatus.PENDING, UploadStatus.VALIDATING) for v in page.versions)
        # the version just uploaded (?uploaded=N), as the store has it now: its status line says
        # whether it waits, is being validated, passed or failed (none for a version not on the page)
        just = next((v for v in page.versions if uploaded is not None and v.version == uploaded), None)
        return render(
            request, "bot_page.html", page=page, owner=owner, uploaded=just, waiting=waiting, nav="bots",
            opponents=" and ".join(OPPONENTS),
        )  # fmt: skip

    @router.post("/bots/{name}/versions/{version}/retire")
    def retire(request: Request, name: str, version: int, csrf_token: str = Form("")) -> Response:
        acc = accounts_of(request)
        check_csrf(request, csrf_token)
        page = managed(acc, current_user(request), name)
        vid = version_id(acc, page.id, version)
        try:
            set_status(acc.db, vid, UploadStatus.RETIRED, "retired by its owner")
        except UploadError as exc:
            raise Problem(exc.status, "Cannot retire", str(exc)) from None
        return RedirectResponse(f"/bots/{name}", status_code=303)

    @router.post("/bots/{name}/delete")
    def delete(request: Request, name: str, csrf_token: str = Form("")) -> Response:
        acc = accounts_of(request)
        check_csrf(request, csrf_token)
        page = managed(acc, current_user(request), name)
        delete_bot(acc.db, page.id)
        return RedirectResponse("/account", status_code=303)

    @router.get("/bots/{name}/versions/{version}/file")
    def download(request: Request, name: str, version: int) -> Response:
        acc = accounts_of(request)
        page = managed(acc, current_user(request), name)
        vid = version_id(acc, page.id, version)
        with acc.db.session() as session:
            v = session.get(BotVersion, vid)
            bot = session.get(Bot, page.id)
        assert v is not None and bot is not None
        path = artifact_path(v)
        if not path.is_file():
            raise Problem(404, "File missing", f"the stored file of {name} version {version} is missing")
        headers = {"Content-Disposition": f'attachment; filename="{v.filename}"', "Cache-Control": "no-store"}
        return Response(path.read_bytes(), media_type="application/octet-stream", headers=headers)

    return router
