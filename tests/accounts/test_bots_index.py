"""``/bots`` (the list of the arena's bots) and the empty leaderboard's hint, over real HTTP on
both databases: ``arena serve``'s app points a club member to the upload form and the ladder,
``arena web`` (the operator's viewer) keeps the command-line hint and has no ``/bots``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve.serverkit import GOOD_BOT, Client

from arena.accounts.users import create_user
from arena.ladder.field import ensure_ladder
from arena.serve.webapp import serve_app
from arena.store.bots import add_bot, remove_bot
from arena.store.db import Database
from arena.store.models_accounts import UploadStatus
from arena.store.models_ladder import LadderRating
from arena.submission.store import set_status, submit_version
from arena.web.app import create_app
from arena.web.auth_routes import Accounts
from arena.web.server import BackgroundServer

PW = "a good long password"


@pytest.fixture
def served(db: Database) -> Iterator[str]:
    server = BackgroundServer(serve_app(db, Accounts(db)))
    url = server.start(timeout=120.0)
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def viewer(db: Database) -> Iterator[str]:
    server = BackgroundServer(create_app(db))
    url = server.start(timeout=120.0)
    try:
        yield url
    finally:
        server.stop()


def _row(body: str, bot: str) -> str:
    found = re.search(rf'<tr class="bot" data-bot="{re.escape(bot)}".*?</tr>', body, re.S)
    assert found, (bot, body[:2000])
    return found.group(0)


def test_bots_lists_the_active_bots_with_status_owner_and_ladder_rating(
    served: str, db: Database, arena_home: Path, tmp_path: Path
) -> None:
    ann = create_user(db, "ann", PW)
    data = GOOD_BOT.read_bytes()
    submit_version(db, ann, "annbot", "annbot.py", data)  # pending
    second = submit_version(db, ann, "annbot", "annbot.py", data + b"# v2\n")
    assert second.version.id is not None
    set_status(db, second.version.id, UploadStatus.REJECTED, "it crashed")  # the newest: rejected
    cli = add_bot(db, "clibot", GOOD_BOT)  # registered from the CLI: no owner, active
    copy = tmp_path / "gone.py"
    copy.write_bytes(data + b"# gone\n")
    add_bot(db, "gonebot", copy)
    remove_bot(db, "gonebot")
    ladder = ensure_ladder(db)
    assert ladder.id is not None and cli.id is not None
    with db.session() as session:
        session.add(
            LadderRating(tournament_id=ladder.id, bot_version_id=cli.id, mu=30.0, sigma=2.0, games=42)
        )

    page = Client(served).get("/bots")  # anyone may read it
    assert page.status == 200, page
    assert "gonebot" not in page.body
    assert re.findall(r'data-bot="([^"]+)"', page.body) == ["annbot", "clibot"]
    ann_row = _row(page.body, "annbot")
    assert 'href="/bots/annbot"' in ann_row and "ann</td>" in ann_row
    assert 'data-status="rejected"' in ann_row and '<td class="num">2</td>' in ann_row
    cli_row = _row(page.body, "clibot")
    assert 'href="/bots/clibot"' in cli_row and "admins" in cli_row and 'data-status="active"' in cli_row
    assert "24.00" in cli_row and '<td class="num">42</td>' in cli_row  # mu - 3 sigma, games
    assert re.search(r'<a href="/bots" class="active">Bots</a>', page.body)  # in the header's nav
    assert Client(served).get("/bots/annbot").status == 200


def test_an_empty_bots_page_and_leaderboard_point_to_the_upload_form(served: str) -> None:
    c = Client(served)
    bots = c.get("/bots")
    assert bots.status == 200 and 'href="/submit"' in bots.body and "No bots yet" in bots.body
    board = c.get("/leaderboard")
    assert board.status == 200
    empty = re.search(r'<td colspan="10" class="empty">(.*?)</td>', board.body, re.S)
    assert empty, board.body[:2000]
    assert 'href="/submit"' in empty.group(1) and 'href="/ladder"' in empty.group(1)
    assert "arena tournament run" not in board.body


def test_the_viewer_keeps_the_command_line_hint_and_has_no_bots_page(viewer: str) -> None:
    c = Client(viewer)
    board = c.get("/leaderboard")
    assert board.status == 200 and "arena tournament run" in board.body
    assert 'href="/submit"' not in board.body and 'href="/bots"' not in board.body
    assert c.get("/bots").status == 404
