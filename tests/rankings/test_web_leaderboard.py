"""The web leaderboard gets the same trustworthy table: ranked bots, a provisional list apart, no
zero-width interval, each system on its own scale, removed bots hidden (real app, real socket)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest

from arena.store.bots import remove_bot
from arena.store.db import Database
from arena.web.app import create_app
from arena.web.server import BackgroundServer

from .conftest import store_games
from .test_leaderboard import field_games, zero_width


class Tables(HTMLParser):
    """The ``data-bot`` rows of every ``table.leaderboard``, per table (provisional or not)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[bool, list[str]]] = []
        self.headers: list[list[str]] = []
        self._th = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and "leaderboard" in (a.get("class") or ""):
            self.tables.append(("provisional" in (a.get("class") or ""), []))
            self.headers.append([])
        elif tag == "tr" and a.get("data-bot") and self.tables:
            self.tables[-1][1].append(str(a["data-bot"]))
        self._th = tag == "th"

    def handle_data(self, data: str) -> None:
        if self._th and self.headers:
            self.headers[-1].append(data.strip())

    def handle_endtag(self, tag: str) -> None:
        self._th = False


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode("utf-8"))


@pytest.fixture
def site(db: Database) -> Iterator[str]:
    store_games(db, field_games())
    with BackgroundServer(create_app(db)) as url:
        yield url


def test_web_leaderboard_page_and_api(db: Database, site: str) -> None:
    for system in ("pl", "elo", "openskill"):
        page = get(f"{site}/leaderboard?system={system}")
        tables = Tables()
        tables.feed(page)
        assert tables.tables == [(False, ["greedy", "invader", "random"]), (True, ["newbie"])], system
        assert zero_width(re.sub(r"<[^>]+>", "", page)) == []
        data = json.loads(get(f"{site}/api/leaderboard?system={system}"))
        assert [(r["bot"], r["rank"], r["provisional"]) for r in data["rows"]] == [
            ("greedy", 1, False), ("invader", 2, False), ("random", 3, False), ("newbie", None, True),
        ]  # fmt: skip
    page = get(f"{site}/leaderboard?system=openskill")
    tables = Tables()
    tables.feed(page)
    assert tables.headers[0][:5] == ["#", "bot", "mu", "95% interval", "mu − 3 sigma"]
    assert "Elo scale" not in page and "mu - 3 sigma" in page
    row = page[page.index('data-bot="greedy"') :].split("</tr>")[0]
    assert re.search(r"<b>\d\d\.\d</b>", row), row  # OpenSkill's own scale, around 25
    tiny = store_games(db, field_games()[-2:], name="tiny")
    page = get(f"{site}/tournaments/{tiny}")
    assert page.count(">too few games</td>") == 2 and zero_width(re.sub(r"<[^>]+>", "", page)) == []

    remove_bot(db, "invader")
    tables = Tables()
    tables.feed(get(f"{site}/leaderboard"))
    assert tables.tables == [(False, ["greedy", "random"]), (True, ["newbie"])]
    data = json.loads(get(f"{site}/api/leaderboard"))
    assert "invader" not in {r["bot"] for r in data["rows"]}


def test_a_bot_removed_after_the_board_was_shown_leaves_the_web_board(db: Database, site: str) -> None:
    # the web caches each leaderboard until the results change; removing a bot changes no
    # result, but hides it from the all-matches board (as 'arena leaderboard' does at once)
    before = json.loads(get(f"{site}/api/leaderboard"))
    assert "invader" in {r["bot"] for r in before["rows"]}
    remove_bot(db, "invader")
    after = json.loads(get(f"{site}/api/leaderboard"))
    assert "invader" not in {r["bot"] for r in after["rows"]}
    tables = Tables()
    tables.feed(get(f"{site}/leaderboard"))
    assert "invader" not in [bot for _, bots in tables.tables for bot in bots]
