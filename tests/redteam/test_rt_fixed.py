"""Red-team findings F3, F5, F6, F8, F11 against a real ``arena serve`` (each failed before its fix):
a bot's stderr only for its owner, no address chosen by X-Forwarded-For, every POST body bounded,
64-bit-overflowing ids a 404, ``arena users add-admin`` on an existing name ends its sessions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from redteam.rtkit import Client, Served, raw_exchange, sign_up, wait_status

SECRET = "SECRET-XYZZY"
CRASH = (
    f"#!/usr/bin/env python3\nimport sys\nprint('db password is {SECRET}', file=sys.stderr)\nsys.exit(1)\n"
)


def match_paths(served: Served) -> list[str]:
    paths = ["/matches", "/api/matches"]
    for (mid,) in served.rows("SELECT id FROM match"):
        paths += [f"/matches/{mid}", f"/api/matches/{mid}", f"/api/matches/{mid}/replay",
                  f"/api/matches/{mid}/replay.jsonl", f"/matches/{mid}/export.html"]  # fmt: skip
    return paths


def test_f3_stderr_is_shown_to_the_bots_owner_only(served: Served) -> None:
    carol = sign_up(served, "carol", "carol-pw-1")
    r = carol.upload("/submit", {"name": "carolbot", "csrf_token": carol.csrf("/submit")}, "crash.py",
                     CRASH.encode())  # fmt: skip
    assert r.status == 303
    assert wait_status(served, "carolbot", 1) == "rejected"
    paths = ["/bots/carolbot", "/api/bots/carolbot", "/api/bots/carolbot/versions/1", *match_paths(served)]
    assert len(paths) > 5  # the validation matches were played
    for who in (Client(served), sign_up(served, "dave", "dave-pw-12")):
        leaks = [p for p in paths if SECRET in who.get(p).text]
        assert not leaks, f"the owner-only stderr is public at {leaks}"
    assert "crashed" in Client(served).get("/bots/carolbot").text  # the reason stays, without the line
    # the owner still sees it: the bot page's stderr tail, the forfeit evidence of the replay
    seen = [p for p in paths if SECRET in carol.get(p).text]
    assert "/bots/carolbot" in seen and any(p.endswith("/replay") for p in seen), seen
    stored = served.rows("SELECT COUNT(*) FROM match")[0][0]
    assert stored > 0


def failed_sign_ins(served: Served, forwarded: bool) -> list[int]:
    codes = []
    for i in range(25):
        c = Client(served)
        token = c.csrf("/login")
        r = c.form("/login", {"username": f"guess{i}", "password": "wrong-password", "csrf_token": token},
                   {"X-Forwarded-For": f"203.0.113.{i}"} if forwarded else {})  # fmt: skip
        codes.append(r.status)
    return codes


def test_f5_x_forwarded_for_does_not_choose_the_counted_address(tmp_path: Path) -> None:
    plain = Served(tmp_path / "plain")  # its own server: the failures below lock out the loopback
    try:
        codes = failed_sign_ins(plain, forwarded=True)
    finally:
        plain.stop()
    assert 429 in codes, f"25 failed sign-ins from one client, never limited: {codes}"
    # behind a proxy the operator names, the forwarded address is the one counted
    proxied = Served(tmp_path / "proxied", "--forwarded-allow-ips", "127.0.0.1")
    try:
        assert 429 not in failed_sign_ins(proxied, forwarded=True)
        assert 429 in failed_sign_ins(proxied, forwarded=False)
    finally:
        proxied.stop()


def test_f6_every_post_body_is_bounded(served: Served) -> None:
    mb = 100
    b = "rtb"
    part = f'--{b}\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\n'.encode()
    for path in ("/login", "/signup", "/logout", "/account/tokens", "/bots/x/delete"):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={b}\r\n"
            f"Content-Length: {len(part) + (mb << 20) + len(b) + 8}\r\n\r\n"
        ).encode()
        answer = raw_exchange(served, head + part, [b"a" * (1 << 20)] * mb)
        assert answer.startswith(b"HTTP/1.1 413"), (path, answer[:80])
    # chunked, no length: cut off past the limit
    head = b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    head += b"Transfer-Encoding: chunked\r\n\r\n"
    chunk = b"%x\r\n%s\r\n" % (1 << 16, b"a" * (1 << 16))
    answer = raw_exchange(served, head, [chunk] * 64 + [b"0\r\n\r\n"])
    assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
    # a small chunked form still works (a CSRF refusal, not a size refusal)
    small = b"a=1"
    answer = raw_exchange(served, head, [b"%x\r\n%s\r\n0\r\n\r\n" % (len(small), small)])
    assert answer.startswith(b"HTTP/1.1 403"), answer[:80]
    assert served.alive()


def test_f8_ids_beyond_64_bits_are_404_not_500(served: Served) -> None:
    anyone = Client(served)
    bad = []
    for n in (2**63, 2**64 + 5, 10**30, -(2**63) - 1):
        for path in (f"/matches/{n}", f"/api/matches/{n}", f"/api/matches/{n}/replay", f"/tournaments/{n}",
                     f"/api/tournaments/{n}", f"/live/{n}", f"/api/live/{n}", f"/matches/{n}/analysis",
                     f"/api/leaderboard?tournament={n}", f"/matches/{n}/export.html",
                     f"/api/matches/{n}/replay.jsonl"):  # fmt: skip
            r = anyone.get(path)
            if r.status >= 500 or r.status not in (400, 404, 422):
                bad.append((path, r.status))
    assert not bad, bad


def test_f11_add_admin_on_an_existing_name_ends_its_sessions(served: Served) -> None:
    victim = sign_up(served, "victim", "victim-password")
    victim.upload("/submit", {"name": "victimbot", "csrf_token": victim.csrf("/submit")}, "v.py",
                  b"#!/usr/bin/env python3\nprint('hi')\n")  # fmt: skip
    squatter = sign_up(served, "admin", "squatters-password")
    env = dict(os.environ, ARENA_HOME=str(served.home), ARENA_ADMIN_PASSWORD="the-real-admin-pw")
    env.pop("ARENA_DATABASE_URL", None)
    arena = str(Path(sys.executable).parent / "arena")

    def add_admin(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([arena, "users", "add-admin", "admin", *extra], env=env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip

    refused = add_admin()
    assert refused.returncode != 0 and "--promote" in refused.stderr, (refused.stdout, refused.stderr)
    assert served.rows("SELECT is_admin FROM user_account WHERE username = 'admin'") == [(0,)]
    done = add_admin("--promote")
    assert done.returncode == 0, done.stderr
    assert "session" in done.stdout and "token" in done.stdout, done.stdout
    r = squatter.form("/bots/victimbot/delete", {"csrf_token": squatter.csrf("/login")})
    assert r.status != 303, "the squatter's old session acted as the new admin"
    assert served.rows("SELECT COUNT(*) FROM bot WHERE name = 'victimbot' AND removed_at IS NULL") == [(1,)]
