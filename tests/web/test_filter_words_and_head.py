"""The web app's termination filter takes what ``arena replays list --termination`` takes (the stored
values and the words the tables show: "finished", "round cap"), its menu and its table speak those
words, a typo is refused naming them (without the "newer arena" hint, which is for stored values);
and every GET page and API route answers HEAD like GET, without the body."""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from arena.cli.main import app as cli_app
from arena.endings import (
    MatchEnd,
    Reason,
    UnknownEnding,
    known_terminations,
    match_label,
    parse_ending,
    parse_termination_filter,
    termination_word,
)
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.models import Match
from arena.store.tournaments import add_match, record_result
from arena.web.app import create_app
from arena.web.server import BackgroundServer

from .conftest import Arena, http_get, plant_copy, two_bot_tournament

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


# ---- the termination filter ---------------------------------------------------------------------


@dataclass
class Served:
    url: str
    ids: dict[str, int]  # "normal", "round-cap", "forfeit" -> the match that ended so


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """A fresh arena (ARENA_HOME, for the CLI too) with three finished matches: one ended normally,
    one at the round cap, one by a crash forfeit; served over HTTP."""
    db, vids, names, tid = two_bot_tournament(tmp_path, monkeypatch)
    ids = {}
    for k, (ends, end) in enumerate(
        [
            ((MatchEnd.NORMAL, MatchEnd.NORMAL), MatchEnd.NORMAL),
            ((MatchEnd.ROUND_CAP, MatchEnd.ROUND_CAP), MatchEnd.ROUND_CAP),
            ((MatchEnd.FORFEIT, Reason.CRASHED), MatchEnd.FORFEIT),
        ]
    ):
        mid = add_match(db, tid, seed=k, group=f"g{k}", version_ids=vids)
        seats = tuple(
            SeatOutcome(s, names[vids[s]], 10 - s, s + 1, ends[s], "", 0.1, 0.1, 2) for s in range(2)
        )
        assert record_result(db, mid, MatchResult(f"m{mid}", k, 2, end, seats, "a replay\n"))
        ids[str(end)] = mid
    with BackgroundServer(create_app(db)) as url:
        yield Served(url, ids)
    db.close()


_get = http_get


def _q(word: str) -> str:
    return urllib.parse.quote(word)


def _rows(html: str) -> set[int]:
    return {int(m) for m in re.findall(r'<tr data-match="(\d+)"', html)}


# what a person types -> the stored ending it names (the matches it finds: the one that ended so;
# "crashed" is a seat's, in the forfeit match)
TYPED = [
    ("finished", "normal"),
    ("Finished", "normal"),
    (" round cap ", "round-cap"),
    ("Round Cap", "round-cap"),
    ("round_cap", "round-cap"),
    ("round-cap", "round-cap"),
    ("normal", "normal"),
    ("forfeit", "forfeit"),
    ("crashed", "crashed"),
    ("CRASHED", "crashed"),
]


@pytest.mark.parametrize(("typed", "stored"), TYPED)
def test_the_filter_takes_the_words_the_tables_show(served: Served, typed: str, stored: str) -> None:
    want = {served.ids["forfeit" if stored == "crashed" else stored]}
    status, body = _get(f"{served.url}/api/matches?termination={_q(typed)}")
    assert status == 200, body
    data = json.loads(body)
    assert {m["id"] for m in data["items"]} == want, data
    assert data["filters"] == {"termination": stored}, data  # read as the stored value it names
    status, html = _get(f"{served.url}/matches?termination={_q(typed)}")
    assert status == 200, html
    assert _rows(html) == want, html


@pytest.mark.parametrize("typed", ["banana", "finish", "round  cap", "won by forfeit"])
def test_an_unknown_typed_termination_is_refused_naming_the_accepted_words(
    served: Served, typed: str
) -> None:
    status, body = _get(f"{served.url}/api/matches?termination={_q(typed)}")
    assert status == 400, body
    detail = json.loads(body)["detail"]
    assert f"unknown termination {typed!r}" in detail, detail
    assert ", ".join(known_terminations()) in detail, detail  # every stored value
    assert "(or finished, round cap: the words the tables show)" in detail, detail
    assert "newer arena" not in detail and "upgrade" not in detail, detail  # nothing stored it
    status, html = _get(f"{served.url}/matches?termination={_q(typed)}")
    assert status == 400, html
    assert "finished, round cap" in html and "newer arena" not in html, html


def test_the_table_and_the_menu_speak_the_same_words(served: Served) -> None:
    status, html = _get(f"{served.url}/matches")
    assert status == 200, html
    # the termination column: the words arena replays list shows (the stored value in data-termination)
    shown = dict(re.findall(r'<span class="badge[^"]*" data-termination="([^"]+)">([^<]*)</span>', html))
    assert shown == {
        "normal": "finished",
        "round-cap": "round cap",
        "forfeit": "random forfeited (crashed)",
    }, shown
    assert shown == {t: match_label(t, [("random", "crashed")] if t == "forfeit" else []) for t in shown}
    menu = re.search(r'<select name="termination">(.*?)</select>', html, re.S)
    assert menu is not None, html
    options = re.findall(r'<option value="([^"]*)"', menu.group(1))
    assert options == ["", "finished", "round cap", "forfeit", "crashed"], options  # vocabulary order
    for word in options[1:]:  # each choice, submitted, is accepted, selected again and finds its matches
        status, page = _get(f"{served.url}/matches?termination={_q(word)}")
        assert status == 200, page
        again = re.search(r'<select name="termination">(.*?)</select>', page, re.S)
        assert again is not None and f'<option value="{word}" selected>' in again.group(1), again
        assert _rows(page), (word, page)
    status, page = _get(f"{served.url}/matches?termination=Timeout")  # accepted, though no match has it
    assert status == 200 and not _rows(page), page
    again = re.search(r'<select name="termination">(.*?)</select>', page, re.S)
    assert again is not None and '<option value="timeout" selected>' in again.group(1), again  # kept


@pytest.mark.parametrize("typed", ["finished", "Round Cap", "round_cap", "crashed", "banana", "finish"])
def test_the_web_filter_and_the_cli_agree(served: Served, typed: str) -> None:
    """``arena replays list --termination`` and ``/api/matches?termination=`` accept the same words
    and find the same matches."""
    status, body = _get(f"{served.url}/api/matches?termination={_q(typed)}")
    result = CliRunner().invoke(cli_app, ["replays", "list", "--termination", typed])
    if status == 400:
        assert result.exit_code == 2, result.output
        return
    assert status == 200 and result.exit_code == 0, (body, result.output)
    listed = {int(m) for m in re.findall(r"^│\s+(\d+)\s+│", result.output, flags=re.M)}
    assert listed == {m["id"] for m in json.loads(body)["items"]}, result.output


def test_the_shared_mapping_reads_every_word_back() -> None:
    for t in known_terminations():  # every stored value, and the word a table shows for it
        assert parse_termination_filter(t) is parse_ending(t)
        assert parse_termination_filter(termination_word(t)) is parse_ending(t)
    for end in (MatchEnd.NORMAL, MatchEnd.ROUND_CAP):  # the tables' words are match_label's
        assert termination_word(end) == match_label(end)
    with pytest.raises(UnknownEnding) as typed:
        parse_termination_filter("finish")
    assert "newer arena" not in str(typed.value)
    with pytest.raises(UnknownEnding, match=r"newer arena\? upgrade this one"):
        parse_ending("finished")  # a stored value: the hint stays (the tables' words are not stored)


# ---- HEAD ---------------------------------------------------------------------------------------


@dataclass
class Site:
    url: str
    app: FastAPI
    arena: Arena


@pytest.fixture(scope="module")
def head_site(arena: Arena, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The web app over a copy of the real arena (bot processes played it: real replays, a forfeit)."""
    served = arena.copy(tmp_path_factory.mktemp("head-home"))
    db = served.db()
    app = create_app(db)
    with BackgroundServer(app) as url:
        yield Site(url, app, served)
    db.close()


def _get_routes(routes: list[Any]) -> list[str]:
    """The paths of every GET route, included routers' too (mounts answer HEAD on their own)."""
    out: list[str] = []
    for r in routes:
        inner = getattr(r, "original_router", None) or getattr(r, "router", None)
        if hasattr(r, "path") and "GET" in (getattr(r, "methods", None) or ()):
            out.append(r.path)
        elif not hasattr(r, "path") and inner is not None:
            out.extend(_get_routes(list(inner.routes)))
    return out


def _fill(path: str, site: Site) -> str:
    values = {
        "match_id": str(site.arena.forfeit_matches[0]),
        "tournament_id": str(site.arena.forfeit_tournament),
        "ref": "greedy",
    }
    names = re.findall(r"{(\w+)}", path)
    assert set(names) <= set(values), f"no value for {names} of {path}: add one to this test"
    return re.sub(r"{(\w+)}", lambda m: values[m.group(1)], path)


def _request(url: str, method: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the raw bytes after the headers, over one connection the server closes."""
    parts = urllib.parse.urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname or "127.0.0.1"
    with socket.create_connection((host, parts.port or 80), timeout=20) as s:
        s.sendall(f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, rest


def _get_head_of(url: str) -> tuple[int, dict[str, str]]:
    """A GET's status and headers (its body is not read: a stream may go on)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        conn.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}
    finally:
        conn.close()


def test_every_get_route_answers_head_like_get(head_site: Site) -> None:
    paths = _get_routes(list(head_site.app.routes))
    for must in ("/", "/leaderboard", "/matches", "/api/matches", "/api/live/{match_id}/events"):
        assert must in paths, paths  # the walk found the app's and the included routers' routes
    checked = []
    for path in paths:
        url = head_site.url + _fill(path, head_site)
        status, headers = _get_head_of(url)
        head_status, head_headers, rest = _request(url, "HEAD")
        assert head_status == status != 405, (path, status, head_status)
        assert rest == b"", (path, rest[:200])  # headers only
        for name in ("content-type", "content-length", "location"):
            assert head_headers.get(name) == headers.get(name), (path, name, headers, head_headers)
        checked.append((path, status))
    assert ("/leaderboard", 200) in checked and ("/", 307) in checked, checked


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/leaderboard",
        "/matches?termination=finished",
        "/api/leaderboard",
        "/api/board",
        "/static/viewer.css",
    ],
)
def test_head_gives_the_headers_of_get_without_the_body(head_site: Site, path: str) -> None:
    status, headers, body = _request(head_site.url + path, "GET")
    head_status, head_headers, rest = _request(head_site.url + path, "HEAD")
    assert (head_status, rest) == (status, b""), (path, head_status, rest[:200])
    assert status in (200, 307) and (body or status == 307), (path, status)
    for name in ("content-type", "content-length", "location", "cache-control"):
        assert head_headers.get(name) == headers.get(name), (path, name)


def test_head_on_an_event_stream_answers_at_once_and_stops_it(head_site: Site) -> None:
    """The live stream of a running match goes on while it is played: HEAD gives its headers,
    ends, and the stream stops watching the match (the GET's goes on)."""
    db = head_site.arena.db()
    try:
        running = plant_copy(db, head_site.arena.matches[0])
        with db.session() as session:
            m = session.get(Match, running)
            assert m is not None
            m.status, m.termination, m.finished_at = "running", None, None
            session.add(m)
    finally:
        db.close()
    hub = head_site.app.state.live_hub
    assert hub is not None
    where = urllib.parse.urlsplit(head_site.url)
    path = f"/api/live/{running}/events"

    def connect() -> socket.socket:
        return socket.create_connection((where.hostname or "127.0.0.1", where.port or 80), timeout=3)

    with connect() as get, connect() as head:  # both kept open (HTTP/1.1 keep-alive)
        get.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = b""
        while b"event: hello" not in got:
            got += get.recv(65536)
        with pytest.raises(TimeoutError):  # a GET's stream of a running match goes on
            while get.recv(65536):
                pass
        assert len(hub.watchers.get(running, ())) == 1, "the GET's stream watches the match"
        head.sendall(f"HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:  # at once (the socket's 3 s timeout would fail it)
            answer += head.recv(65536)
        lines = answer.decode("latin-1").split("\r\n")
        assert lines[0] == "HTTP/1.1 200 OK" and "content-type: text/event-stream; charset=utf-8" in lines
        assert answer.endswith(b"\r\n\r\n"), answer  # headers only ...
        with pytest.raises(TimeoutError):
            head.recv(65536)  # ... and nothing after them on the open connection
        deadline = time.monotonic() + 5
        while len(hub.watchers.get(running, ())) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        # the HEAD's stream stopped watching the match although its connection is open; the GET's goes on
        assert len(hub.watchers.get(running, ())) == 1, hub.watchers
    deadline = time.monotonic() + 10
    while hub.watchers.get(running) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not hub.watchers.get(running), hub.watchers  # and the GET's when its client left


def test_head_leaves_errors_and_other_methods_alone(head_site: Site) -> None:
    for path, want in (("/matches/999999", 404), ("/api/matches?termination=banana", 400)):
        status, _headers, rest = _request(head_site.url + path, "HEAD")
        assert (status, rest) == (want, b""), path
    status, headers, _ = _request(head_site.url + "/leaderboard", "DELETE")
    assert status == 405, status  # a method no route takes is still refused ...
    assert headers.get("allow") == "GET", headers  # ... naming the ones it takes (RFC 9110)
    status, headers, _ = _request(f"{head_site.url}/matches/{head_site.arena.matches[0]}/analysis", "PUT")
    assert status == 405, status  # (GET and POST there)
    # (Starlette names the methods of the first route of that path it finds: POST here)
    assert set(headers.get("allow", "").replace(" ", "").split(",")) <= {"GET", "POST"}, headers
    assert headers.get("allow"), headers
