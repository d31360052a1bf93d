"""The accounts' web surface over real HTTP (the app of ``arena serve`` on a real socket, in this
process): CSRF on every form, rate limits (429 with Retry-After), bad uploads that leave nothing
behind, and pages that need a user."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve.serverkit import CRASH_BOT, GOOD_BOT, Client
from sqlmodel import select

from arena.accounts.ratelimit import Limits, RateLimiter
from arena.serve.webapp import serve_app
from arena.store.db import Database
from arena.store.models import Bot, BotVersion
from arena.store.models_accounts import BotUpload
from arena.web.auth_routes import Accounts
from arena.web.server import BackgroundServer

PW = "a good long password"


@pytest.fixture
def site(db: Database) -> Iterator[str]:
    limits = Limits(
        RateLimiter(4, 1 / 600), RateLimiter(100, 1), RateLimiter(3, 1 / 600), RateLimiter(6, 1 / 600)
    )
    server = BackgroundServer(serve_app(db, Accounts(db, limits=limits)))
    url = server.start(timeout=120.0)  # generous: the machine may be loaded
    try:
        yield url
    finally:
        server.stop()


def _nothing_stored(db: Database, home: Path) -> None:
    with db.session() as session:
        assert session.exec(select(Bot)).all() == []
        assert session.exec(select(BotVersion)).all() == []
        assert session.exec(select(BotUpload)).all() == []
    artifacts = home / "artifacts"
    assert not artifacts.exists() or not any(artifacts.rglob("*")), list(artifacts.rglob("*"))


def test_every_form_needs_its_csrf_token(site: str) -> None:
    anon = Client(site)
    fields = {"username": "eve", "password": PW, "password2": PW}
    assert anon.post("/signup", fields).status == 403  # no token
    assert anon.post("/signup", {**fields, "csrf_token": "forged"}).status == 403
    assert anon.post("/login", {"username": "eve", "password": PW}).status == 403
    user = Client(site)
    user.signup("ann", PW)
    for path in ("/logout", "/account/tokens", "/account/tokens/1/revoke", "/bots/x/delete"):
        answer = user.post(path, {})
        assert answer.status == 403, (path, answer.status)
        answer = user.post(path, {"csrf_token": "forged"})
        assert answer.status == 403, (path, answer.status)
    # the double-submit token of a signed-out page is not the session's secret
    stale = anon.csrf("/signup")
    assert user.post("/account/tokens", {"csrf_token": stale}).status == 403
    up = user.upload("/submit", {"name": "x"}, "x.py", GOOD_BOT.read_bytes())
    assert up.status == 403
    ok = user.post("/account/tokens", {"name": "t"}, csrf_from="/account")
    assert ok.status == 303 and ok.headers["location"].startswith("/account")


def test_a_new_token_is_shown_once_after_a_redirect(site: str) -> None:
    """Post/Redirect/Get: the POST makes one token and redirects; the next GET of /account shows
    it once (no-store), a reload shows it no more and makes none; never in a URL."""
    user = Client(site)
    user.signup("tom", PW)
    other = Client(site)  # the same user in another browser: not its token to see
    assert other.login("tom", PW).status == 303
    made = user.post("/account/tokens", {"name": "laptop"}, csrf_from="/account")
    assert made.status == 303, made
    location = made.headers["location"]
    assert location.split("#")[0] == "/account" and "arena_" not in location
    assert "arena_" not in made.body
    assert "new-token" not in other.get("/account").body
    page = user.get(location.split("#")[0])
    found = re.search(r'<code id="new-token">(arena_[^<]+)</code>', page.body)
    assert page.status == 200 and found, page.body[:500]
    assert page.headers.get("cache-control") == "no-store"
    # the account bar is a div: a <form> (Sign out) inside a <p> ended it, and wrapped alone
    bar = re.search(r'<div class="acct-bar">(.*?)</div>', page.body, re.S)
    assert bar and 'action="/logout"' in bar.group(1) and "Sign out" in bar.group(1), page.body[:800]
    again = user.get("/account")  # a reload: the token is not shown again, and no second one
    assert again.status == 200 and found.group(1) not in again.body and 'id="new-token"' not in again.body
    assert again.body.count("laptop") == 1


def test_a_token_not_yet_shown_is_never_shown_to_the_next_session(site: str) -> None:
    """A token waits for its session's next GET of /account; if that session ends first, a later
    session must not see it.  SQLite gives a new row the id of a deleted newest one, and the
    tokens waited by that id: the next person to sign in was shown the other user's token."""
    ann = Client(site)
    ann.signup("ann", PW)
    made = ann.post("/account/tokens", {"name": "laptop"}, csrf_from="/account")
    assert made.status == 303, made  # the redirect is not followed: the token still waits
    assert ann.post("/logout", {}, csrf_from="/bots").status == 303  # her session's row goes
    bob = Client(site)
    bob.signup("bob", PW)  # a new session: on SQLite, the id her session had
    page = bob.get("/account")
    assert page.status == 200 and "arena_" not in page.body and 'id="new-token"' not in page.body, page.body


def test_session_cookie_is_httponly_and_samesite_lax(site: str) -> None:
    c = Client(site)
    answer = c.post("/signup", {"username": "cookie", "password": PW, "password2": PW}, csrf_from="/signup")
    cookie = answer.headers["set-cookie"]
    assert (
        "arena_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
    )
    assert c.get("/account").status == 200
    assert Client(site).get("/account").status == 303  # signed out: to the sign-in page
    assert Client(site).get("/submit").headers["location"] == "/login?next=/submit"


def test_failed_logins_are_rate_limited_per_user_and_per_address(site: str, db: Database) -> None:
    Client(site).signup("fay", PW)
    c = Client(site)
    for _ in range(3):
        assert c.login("fay", "wrong password").status == 401
    limited = c.login("fay", PW)  # even the right password now waits
    assert limited.status == 429 and int(limited.headers["retry-after"]) >= 1, limited
    assert "too many failed sign-ins" in limited.body
    # other names from the same address: the address's own bucket (6: the sign-up counts, then
    # 3 + 2 failures) runs out too
    for i in range(2):
        assert c.login(f"ghost{i}", "wrong password").status == 401
    assert c.login("someone", "whatever").status == 429


def test_uploads_are_rate_limited(site: str) -> None:
    c = Client(site)
    c.signup("uma", PW)
    for i in range(4):
        data = GOOD_BOT.read_bytes() + f"# {i}\n".encode()
        assert c.upload("/submit", {"name": "up"}, "up.py", data, csrf_from="/submit").status == 303
    again = c.upload("/submit", {"name": "up"}, "up.py", GOOD_BOT.read_bytes() + b"#9\n", csrf_from="/submit")
    assert again.status == 429 and "too many uploads" in again.body and "retry-after" in again.headers
    token = c.token()
    api = c.upload(
        "/api/bots/up/versions", {}, "up.py", b"#!/bin/sh\n", headers={"Authorization": f"Bearer {token}"}
    )
    assert api.status == 429 and api.json()["error"] == "Too many requests"


@pytest.mark.parametrize(
    ("name", "filename", "data", "status", "message"),
    [
        ("empty", "empty.py", b"", 400, "is empty"),
        ("junk", "junk.py", bytes(range(256)) * 8, 415, "neither a text script nor a Linux executable"),
        ("junk2", "junk", b"\x00\x01\x02binary", 415, "neither a text script"),
        ("noext", "notes.txt", b"print('hi')\n", 415, "cannot tell how to run it"),
        ("trick", "../../evil.py", b"print(1)\n", 400, "bad file name"),
        ("trick2", "..", b"print(1)\n", 400, "bad file name"),
        ("trick3", ".hidden.py", b"print(1)\n", 400, "bad file name"),
        ("../up", "ok.py", b"print(1)\n", 400, "bad bot name"),
        ("random", "ok.py", b"print(1)\n", 403, "reserved for a sample bot"),
        ("quote", "bot.sh", b'#!/bin/sh "\necho hi\n', 415, "bot.sh: unreadable shebang line"),
        ("noexec", "bot", b"#!\necho hi\n", 415, "bot: not executable and no known interpreter"),
    ],
)
def test_bad_uploads_get_a_clear_error_and_leave_nothing(
    site: str,
    db: Database,
    arena_home: Path,
    name: str,
    filename: str,
    data: bytes,
    status: int,
    message: str,
) -> None:
    c = Client(site)
    c.signup("val", PW)
    token = c.token()
    web = c.upload("/submit", {"name": name}, filename, data, csrf_from="/submit")
    assert web.status == status and message in web.body, (web.status, web.body[-800:])
    assert str(arena_home) not in web.body  # the file is named, not where the server keeps it
    api = c.upload(
        f"/api/bots/{name}/versions", {}, filename, data, headers={"Authorization": f"Bearer {token}"}
    )
    if name == "../up":  # not even a route: the name cannot hold a '/'
        assert api.status == 404
    else:
        assert api.status == status and message in api.json()["detail"], api
        assert str(arena_home) not in api.body
    _nothing_stored(db, arena_home)


def test_oversized_uploads_are_refused_before_and_after_reading(
    site: str, db: Database, arena_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_MAX_UPLOAD_MB", "0.01")  # 10 kB
    c = Client(site)
    c.signup("big", PW)
    huge = b"#!/bin/sh\n" + b"#" * 200_000
    early = c.upload("/submit", {"name": "big"}, "big.sh", huge, csrf_from="/submit")
    assert early.status == 413 and "over the 0.01 MB limit" in early.body
    late = c.upload("/submit", {"name": "big"}, "big.sh", b"#!/bin/sh\n" + b"#" * 20_000, csrf_from="/submit")
    assert late.status == 413 and "over the 0.01 MB upload limit" in late.body
    _nothing_stored(db, arena_home)


def test_an_oversized_form_upload_gets_the_form_back_and_api_clients_json(
    site: str, db: Database, arena_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a small limit: a client that does not read while it sends (urllib) only sees the early
    # answer when the whole body fits in the socket buffers (the 6 MB case: the browser test)
    monkeypatch.setenv("ARENA_MAX_UPLOAD_MB", "0.01")  # 10 kB
    c = Client(site)
    c.signup("huge", PW)
    token = c.token()
    big = b"#!/bin/sh\n" + b"#" * 150_000  # over the limit and its form overhead: refused unread
    for accept in (None, "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"):
        headers = {"Accept": accept} if accept else {}
        form = c.upload("/submit", {"name": "huge"}, "big.sh", big, headers=headers, csrf_from="/submit")
        assert form.status == 413 and form.headers["content-type"].startswith("text/html"), form
        assert "<title>Upload a bot" in form.body and '<form method="post" action="/submit"' in form.body
        told = re.search(r'id="upload-error">([^<]*)<', form.body)
        assert told and re.fullmatch(
            r"the upload is 0\.15 MB, over the 0\.01 MB limit; nothing was uploaded: "
            r"choose a smaller file \(at most 0\.01 MB\)",
            told.group(1),
        ), form.body[-1500:]
    asks_json = c.upload(
        "/submit",
        {"name": "huge"},
        "big.sh",
        big,
        headers={"Accept": "application/json"},
        csrf_from="/submit",
    )
    assert asks_json.status == 413 and asks_json.headers["content-type"] == "application/json"
    assert asks_json.json()["error"] == "Upload too large"
    assert asks_json.json()["detail"] == "the upload is 0.15 MB, over the 0.01 MB limit"
    api = c.upload(
        "/api/bots/huge/versions",
        {},
        "big.sh",
        big,
        headers={"Authorization": f"Bearer {token}", "Accept": "text/html"},
    )
    assert api.status == 413 and api.json()["detail"] == "the upload is 0.15 MB, over the 0.01 MB limit"
    _nothing_stored(db, arena_home)


def test_api_needs_a_valid_token(site: str) -> None:
    c = Client(site)
    c.signup("tok", PW)  # a session cookie is not enough for the API
    body = c.upload("/api/bots/a/versions", {}, "a.py", CRASH_BOT.read_bytes())
    assert body.status == 401 and "API token" in body.json()["detail"]
    bad = c.upload(
        "/api/bots/a/versions",
        {},
        "a.py",
        CRASH_BOT.read_bytes(),
        headers={"Authorization": "Bearer arena_nope"},
    )
    assert bad.status == 401
    assert c.get("/api/me", headers={"Authorization": "Basic abc"}).status == 401
    token = c.token()
    assert c.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json() == {
        "username": "tok",
        "is_admin": False,
    }


def _answer_before_the_body(site: str, path: str, headers: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    """POST the head of a 4 MB upload to ``path`` and a few bytes of its body: the answer, which
    must come without the rest (which never does)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(site)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    conn.putrequest("POST", path)
    for name, value in {"Content-Type": "multipart/form-data; boundary=zz", **headers}.items():
        conn.putheader(name, value)
    conn.putheader("Content-Length", "4000000")
    conn.endheaders()
    conn.send(b"--zz\r\n")
    answer = conn.getresponse()
    found = (
        answer.status,
        answer.read().decode(errors="replace"),
        {k.lower(): v for k, v in answer.getheaders()},
    )
    conn.close()
    return found


def test_an_upload_over_the_rate_limit_is_refused_before_its_body(site: str) -> None:
    c = Client(site)
    c.signup("rita", PW)
    token = c.token()
    bearer = {"Authorization": f"Bearer {token}"}
    for _ in range(4):  # the site's limit: 4 uploads per user (refused ones count too)
        assert c.upload("/api/bots/r/versions", {}, "r.py", b"", headers=bearer).status == 400
    status, body, headers = _answer_before_the_body(site, "/api/bots/r/versions", bearer)
    assert status == 429 and "too many uploads" in body and "retry-after" in headers, (status, body)
    cookie = "; ".join(f"{k.name}={k.value}" for k in c.jar)
    status, body, headers = _answer_before_the_body(site, "/submit", {"Cookie": cookie})
    assert status == 429 and "too many uploads" in body and "retry-after" in headers, (status, body[:300])


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/api/bots/x/versions", {}, 401),
        ("/api/bots/x/versions", {"Authorization": "Bearer arena_not-a-token"}, 401),
        ("/submit", {}, 303),  # to the sign-in page, as the route answers
        ("/submit", {"Cookie": "arena_session=stale"}, 303),
    ],
)
def test_an_upload_from_nobody_is_refused_before_its_body(
    site: str, db: Database, arena_home: Path, path: str, headers: dict[str, str], status: int
) -> None:
    # the route refused it only once the whole body (up to the upload limit) had come: anybody
    # could make the server take in 5 MB a request, without an account or a rate limit
    answer, body, got = _answer_before_the_body(site, path, headers)
    assert answer == status, (answer, body[:300])
    if status == 303:
        assert got["location"] == "/login?next=/submit"
    _nothing_stored(db, arena_home)


def test_an_upload_without_a_length_is_refused_unread(site: str, db: Database, arena_home: Path) -> None:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(site)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    conn.putrequest("POST", "/api/bots/x/versions")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.putheader("Content-Type", "multipart/form-data; boundary=zz")
    conn.endheaders()
    conn.send(b"5\r\nhello\r\n0\r\n\r\n")
    answer = conn.getresponse()
    assert answer.status == 411 and b"Content-Length" in answer.read()
    conn.close()
    _nothing_stored(db, arena_home)
