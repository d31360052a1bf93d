"""A list page past the end (an old link, a typed page number) says so: not "page 99999 of 1 ·
0–4999900 of 3" above "No matches.", and its "prev" and "last" links lead to the last page."""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.endings import MatchEnd
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.db import Database
from arena.store.tournaments import add_match, record_result
from arena.web.app import create_app
from arena.web.server import BackgroundServer

from .conftest import http_get, two_bot_tournament

pytestmark = pytest.mark.timeout(120)


@dataclass
class Served:
    url: str
    tournament: int
    db: Database
    vids: list[int]


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """One tournament with three finished matches, served over HTTP."""
    db, vids, names, tid = two_bot_tournament(tmp_path, monkeypatch)
    for k in range(3):
        mid = add_match(db, tid, seed=k, group=f"g{k}", version_ids=vids)
        seats = tuple(
            SeatOutcome(s, names[vids[s]], 10 - s, s + 1, MatchEnd.NORMAL, "", 0.1, 0.1, 2) for s in range(2)
        )
        assert record_result(db, mid, MatchResult(f"m{mid}", k, 2, MatchEnd.NORMAL, seats, "a replay\n"))
    with BackgroundServer(create_app(db)) as url:
        yield Served(url, tid, db, vids)
    db.close()


_get = http_get


def _text(page: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _link(page: str, label: str) -> str | None:
    m = re.search(r'<a href="([^"]+)"[^>]*>' + re.escape(label) + "</a>", page)
    return htmllib.unescape(m.group(1)) if m else None


# the path, how many rows it lists in all (the tournament's page lists its 2 queued matches too)
@pytest.mark.parametrize(("path", "total"), [("/matches", 3), ("/tournaments/{t}", 5), ("/tournaments", 1)])
def test_a_page_past_the_end_says_so_and_links_to_the_last_page(
    served: Served, path: str, total: int
) -> None:
    base = path.format(t=served.tournament)
    last = -(-total // 2)
    status, page = _get(f"{served.url}{base}?page=99999&per_page=2")
    assert status == 200, page
    text = _text(page)
    assert f"page 99999 is past the last page, {last} · {total} in all" in text, text
    assert "4999" not in text, text  # no made-up positions ("0–199996 of 3")
    assert "No matches." not in text and "No tournaments yet." not in text, text  # there are some
    assert f"the {total} there are come before it" in text, text
    kept = "system=pl&" if path.startswith("/tournaments/") else ""  # the page's other arguments
    assert _link(page, "‹ prev") == f"{base}?{kept}page={last}&per_page=2", page
    assert _link(page, "last »") == f"{base}?{kept}page={last}&per_page=2", page
    assert _link(page, "next ›") is None, page
    # the last page itself is as before
    status, page = _get(f"{served.url}{base}?page={last}&per_page=2")
    text = _text(page)
    assert f"page {last} of {last} · {total} in all" not in text, text
    assert f"page {last} of {last} · {2 * last - 1}–{total} of {total}" in text, text
    assert _link(page, "last »") is None, page


def test_an_empty_list_still_says_there_is_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _vids, _names, tid = two_bot_tournament(tmp_path, monkeypatch)
    try:
        with BackgroundServer(create_app(db)) as url:
            status, page = _get(f"{url}/matches?tournament={tid}")
    finally:
        db.close()
    assert status == 200, page
    text = _text(page)
    assert "No matches." in text and "page 1 of 1 · 0–0 of 0" in text, text


def test_a_since_after_until_is_a_bad_filter(served: Served) -> None:
    """No day is in both: a 400 that says so, as ``arena replays list`` refuses it (exit 2); it
    was a 200 with no rows."""
    for path in ("/matches", "/api/matches"):
        status, body = _get(served.url + path + "?since=2021-01-01&until=2020-01-01")
        assert status == 400, (path, status, body[:300])
        assert "since 2021-01-01 is after until 2020-01-01" in _text(body), body[:500]
    assert _get(served.url + "/api/matches?since=2020-01-01&until=2020-01-01")[0] == 200  # one day


def test_the_last_day_there_is_as_until_lists_every_match(served: Served) -> None:
    """``until=9999-12-31`` (the last date there is) was a 500: the day after it is out of range."""
    for query in ("until=9999-12-31", "since=0001-01-01&until=9999-12-31"):
        status, body = _get(served.url + "/api/matches?" + query)
        assert status == 200 and '"total":3' in body.replace(" ", ""), (query, status, body[:300])
        status, body = _get(served.url + "/matches?" + query)
        assert status == 200, (query, status, body[:300])


def test_a_match_not_finished_comes_first_among_all_matches(served: Served) -> None:
    """``status=all`` lists the matches not finished (no finish time) before the finished ones, on
    every database (SQLite put them last, PostgreSQL first: a running match was on the last page
    of a long list)."""
    import json

    queued = add_match(served.db, served.tournament, seed=99, group="g99", version_ids=served.vids)
    status, body = _get(served.url + "/api/matches?status=all&per_page=2")
    assert status == 200, body[:300]
    ids = [m["id"] for m in json.loads(body)["items"]]
    assert ids[0] == queued, ids
