"""Red team, accounts: another user's bot, IDOR by ids, CSRF, session fixation, cookie flags,
secrets at rest.  A real ``arena serve``; every request a hostile client would send."""

from __future__ import annotations

import re
import statistics
import time

import pytest

from redteam.rtkit import GOOD_BOT, Client, Served, api_token, sign_up, wait_status

BOT = GOOD_BOT.read_bytes()


@pytest.fixture(scope="module")
def world(served: Served) -> dict[str, object]:
    """alice owns the active bot ``alicebot``; bob is another signed-in user with a token."""
    alice = sign_up(served, "alice", "alice-secret-pw-1")
    bob = sign_up(served, "bob", "bob-secret-pw-22")
    a_token = api_token(alice)
    b_token = api_token(bob)
    r = alice.upload("/submit", {"name": "alicebot", "csrf_token": alice.csrf("/submit")}, "mine.py", BOT)
    assert r.status == 303, r.text[:400]
    assert wait_status(served, "alicebot", 1) == "active"
    return {"alice": alice, "bob": bob, "a_token": a_token, "b_token": b_token}


def versions(served: Served) -> list[tuple[int, str]]:
    return [
        (int(v), str(s))
        for v, s in served.rows(
            "SELECT v.version, u.status FROM botversion v JOIN bot b ON b.id = v.bot_id "
            "JOIN bot_upload u ON u.bot_version_id = v.id WHERE b.name = 'alicebot' ORDER BY v.version"
        )
    ]


def test_another_user_cannot_act_on_the_bot_by_web_or_api(served: Served, world: dict[str, object]) -> None:
    bob = world["bob"]
    assert isinstance(bob, Client)
    bearer = {"Authorization": f"Bearer {world['b_token']}"}
    before = versions(served)
    assert before == [(1, "active")]
    # the file: never served to another user, nor to nobody
    assert bob.get("/bots/alicebot/versions/1/file").status == 403
    assert Client(served).get("/bots/alicebot/versions/1/file").status == 403
    assert BOT not in bob.get("/bots/alicebot/versions/1/file").body
    # upload a version (web form and API), retire, delete (web and API)
    other = BOT + b"\n# bob was here\n"
    r = bob.upload("/submit", {"name": "alicebot", "csrf_token": bob.csrf("/submit")}, "x.py", other)
    assert r.status == 403, r.text[:300]
    body_headers = bearer
    r = bob.upload("/api/bots/alicebot/versions", {}, "x.py", other, headers=body_headers)
    assert r.status == 403
    assert bob.form("/bots/alicebot/versions/1/retire", {"csrf_token": bob.csrf("/account")}).status == 403
    assert bob.form("/bots/alicebot/delete", {"csrf_token": bob.csrf("/account")}).status == 403
    assert bob.request("POST", "/api/bots/alicebot/versions/1/retire", b"", bearer).status == 403
    assert bob.request("DELETE", "/api/bots/alicebot", None, bearer).status == 403
    # ids that do not exist answer the same refusal, not a different leak
    assert bob.request("POST", "/api/bots/alicebot/versions/99/retire", b"", bearer).status == 403
    # the session cookie alone never authenticates the API (no CSRF through the API)
    r = bob.upload("/api/bots/alicebot/versions", {}, "x.py", other)
    assert r.status == 401
    assert versions(served) == before
    assert served.rows("SELECT removed_at FROM bot WHERE name = 'alicebot'") == [(None,)]


def test_a_token_revocation_by_id_is_scoped_to_its_owner(served: Served, world: dict[str, object]) -> None:
    bob = world["bob"]
    assert isinstance(bob, Client)
    alice_ids = [int(r[0]) for r in served.rows(
        "SELECT t.id FROM api_token t JOIN user_account u ON u.id = t.user_id WHERE u.username = 'alice'"
    )]  # fmt: skip
    for token_id in alice_ids:
        r = bob.form(f"/account/tokens/{token_id}/revoke", {"csrf_token": bob.csrf("/account")})
        assert r.status == 404
    me = Client(served).get("/api/me", {"Authorization": f"Bearer {world['a_token']}"})
    assert me.status == 200 and me.json()["username"] == "alice"


@pytest.mark.parametrize("how", ["missing", "other-session", "signed-out-cookie", "cross-origin"])
def test_csrf_refuses_forged_owner_actions(served: Served, world: dict[str, object], how: str) -> None:
    alice, bob = world["alice"], world["bob"]
    assert isinstance(alice, Client) and isinstance(bob, Client)
    fields: dict[str, str] = {}
    headers: dict[str, str] = {}
    if how == "other-session":
        fields["csrf_token"] = bob.csrf("/account")  # a valid token, of another session
    elif how == "signed-out-cookie":
        stranger = Client(served)
        fields["csrf_token"] = stranger.csrf("/login")  # the double-submit value of a signed-out page
        alice_cookie = dict(alice.cookies, arena_csrf=fields["csrf_token"])
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in alice_cookie.items())
    elif how == "cross-origin":
        headers.update({"Origin": "https://evil.example", "Referer": "https://evil.example/x"})
    for path in ("/bots/alicebot/delete", "/bots/alicebot/versions/1/retire", "/account/tokens", "/logout"):
        r = alice.form(path, fields, headers)
        assert r.status == 403, (how, path, r.status)
    assert versions(served) == [(1, "active")]
    assert alice.get("/account").status == 200  # still signed in: the forged logout did nothing


def test_session_fixation_and_logout(served: Served) -> None:
    victim = Client(served)
    planted = "attacker-chosen-session-id-0123456789abcdef"
    victim.cookies["arena_session"] = planted
    token = victim.csrf("/signup")
    r = victim.form(
        "/signup",
        {"username": "carol", "password": "carol-pw-333", "password2": "carol-pw-333", "csrf_token": token},
    )
    assert r.status == 303
    fresh = victim.cookies["arena_session"]
    assert fresh != planted
    attacker = Client(served, {"arena_session": planted})
    assert attacker.get("/account").status == 303  # the planted id is nobody's session
    # a stolen cookie dies with the sign-out (server side, not only in the browser)
    stolen = Client(served, {"arena_session": fresh})
    assert stolen.get("/account").status == 200
    assert victim.form("/logout", {"csrf_token": victim.csrf("/account")}).status == 303
    assert stolen.get("/account").status == 303
    assert stolen.get("/account").header("location") in ("/login?next=/account", "/login?next=%2Faccount")


def test_cookie_flags(served: Served) -> None:
    signed_out = Client(served)
    first = signed_out.get("/login")
    double_submit = [v for v in first.cookies_set() if v.startswith("arena_csrf=")]
    assert double_submit and "httponly" in double_submit[0].lower()
    signup = Client(served)
    token = signup.csrf("/signup")
    r = signup.form(
        "/signup",
        {"username": "dora", "password": "dora-pw-4444", "password2": "dora-pw-4444", "csrf_token": token},
    )
    session_cookie = [v for v in r.cookies_set() if v.startswith("arena_session=")]
    assert session_cookie, r.cookies_set()
    flags = session_cookie[0].lower()
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    assert len(signup.cookies["arena_session"]) >= 32


def test_no_secret_in_clear_in_the_database_or_the_log(served: Served, world: dict[str, object]) -> None:
    alice = world["alice"]
    assert isinstance(alice, Client)
    secrets = [
        b"alice-secret-pw-1",
        b"bob-secret-pw-22",
        str(world["a_token"]).encode(),
        str(world["b_token"]).encode(),
        alice.cookies["arena_session"].encode(),
    ]
    stored = served.raw_store_bytes()
    log = served.output().encode()
    for s in secrets:
        assert s not in stored, s[:8]
        assert s not in log, s[:8]
    hashes = served.rows("SELECT password_hash FROM user_account WHERE username = 'alice'")
    assert str(hashes[0][0]).startswith("$argon2id$")


def test_error_pages_carry_no_traceback(served: Served, world: dict[str, object]) -> None:
    bob = world["bob"]
    assert isinstance(bob, Client)
    for path in (
        "/bots/alicebot/versions/notanumber/file",
        "/bots/alicebot/versions/99999999999999999999999/file",
        "/api/bots/%00/versions/1",
        "/bots/" + "a" * 5000,
        "/api/bots/alicebot/versions/-1",
    ):
        r = bob.get(path)
        assert r.status < 500, (path, r.status, r.text[:300])
        assert "Traceback" not in r.text and 'File "' not in r.text
    assert served.alive()


def test_login_does_not_tell_which_names_exist(served: Served, world: dict[str, object]) -> None:
    """Unknown user and wrong password: the same answer, and about the same time (one argon2
    verification each)."""

    def attempt(name: str) -> tuple[float, int, str]:
        c = Client(served)
        token = c.csrf("/login")
        started = time.perf_counter()
        r = c.form("/login", {"username": name, "password": "not-the-password", "csrf_token": token})
        page = re.sub(r'value="[A-Za-z0-9_-]{30,}"', 'value="TOKEN"', r.text.replace(name, "NAME"))
        return time.perf_counter() - started, r.status, page

    known = [attempt("alice") for _ in range(4)]
    unknown = [attempt(f"nobody{k}") for k in range(4)]
    assert {s for _, s, _ in known} == {s for _, s, _ in unknown} == {401}
    assert {t for _, _, t in known} == {t for _, _, t in unknown}
    tk, tu = statistics.median(t for t, _, _ in known), statistics.median(t for t, _, _ in unknown)
    assert 0.33 < tk / tu < 3.0, (known, unknown)


def test_failed_logins_are_limited_per_user(served: Served) -> None:
    sign_up(served, "erin", "erin-password-9")
    codes = []
    for _ in range(6):
        c = Client(served)
        token = c.csrf("/login")
        codes.append(
            c.form("/login", {"username": "erin", "password": "guess-guess", "csrf_token": token}).status
        )
    assert codes[:5] == [401] * 5 and codes[5] == 429
    c = Client(served)
    token = c.csrf("/login")
    r = c.form("/login", {"username": "ERIN", "password": "erin-password-9", "csrf_token": token})
    assert r.status == 429 and int(r.header("retry-after") or 0) > 0  # even the right password waits
