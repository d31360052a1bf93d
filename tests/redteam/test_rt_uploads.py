"""Red team, uploads: oversized (with and without Content-Length, chunked), empty, binary junk,
archives, path tricks in names and file names, content-type lies.  After each refusal nothing is
left behind (no file under ARENA_HOME, no row) and the server still answers."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from redteam.rtkit import GOOD_BOT, Client, Served, api_token, multipart, raw_exchange, sign_up, wait_status

BOT = GOOD_BOT.read_bytes()
LIMIT = 5_000_000


class Bench:
    """Servers and users for many uploads: each user makes at most 8 and each server serves at
    most 28 (the upload limits are 10 per user and 30 per address; refusals count too)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.servers: list[Served] = []
        self.used_server = 0
        self.used_user = 0
        self.user: tuple[Client, str] | None = None

    def take(self, uploads: int = 1) -> tuple[Served, Client, str]:
        if not self.servers or self.used_server + uploads > 28:
            if self.servers:
                self.servers[-1].stop()
            self.servers.append(Served(self.root / f"home{len(self.servers)}"))
            self.used_server, self.user = 0, None
        server = self.servers[-1]
        if self.user is None or self.used_user + uploads > 8:
            c = sign_up(server, f"eve{self.used_server}-{len(self.servers)}", "eve-password-1")
            self.user, self.used_user = (c, api_token(c)), 0
        self.used_server += uploads
        self.used_user += uploads
        return server, self.user[0], self.user[1]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    b = Bench(tmp_path_factory.mktemp("rtup"))
    try:
        yield b
    finally:
        for s in b.servers:
            s.stop()


def footprint(served: Served) -> tuple[set[str], int, int, int]:
    return served.stored_files(), served.count("bot"), served.count("botversion"), served.count("bot_upload")


def zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("main.py", b"\0" * 20_000_000)
    return buf.getvalue()


def zip_with_symlink() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = zipfile.ZipInfo("bot.py")
        info.external_attr = 0o120777 << 16  # a symlink entry
        z.writestr(info, "/etc/passwd")
    return buf.getvalue()


REFUSED = [
    # (id, bot name, file name, bytes, content type, expected status)
    ("empty", "e1", "bot.py", b"", "text/x-python", 400),
    ("junk", "e2", "bot.py", bytes(range(256)) * 40, "text/x-python", 415),
    ("nul-in-text", "e3", "bot.py", b"print(1)\0\n", "text/x-python", 415),
    ("latin1-text", "e4", "bot.py", "print('é')".encode("latin-1"), "text/x-python", 415),
    ("zip-bomb", "e5", "bot.zip", zip_bomb(), "application/zip", 415),
    ("zip-symlink", "e6", "bot.zip", zip_with_symlink(), "application/zip", 415),
    ("lying-type", "e7", "bot.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "text/x-python", 415),
    ("no-runner", "e8", "bot.txt", b"just some text\n", "text/plain", 415),
    ("dotdot", "e9", "../bot.py", BOT, "text/x-python", 400),
    ("deep-dotdot", "e10", "../../../../tmp/bot.py", BOT, "text/x-python", 400),
    ("absolute", "e11", "/etc/cron.d/bot.py", BOT, "text/x-python", 400),
    ("backslash", "e12", "..\\..\\bot.py", BOT, "text/x-python", 400),
    ("dotfile", "e13", ".bashrc", BOT, "text/x-python", 400),
    ("unicode", "e14", "bøt\u202ey p.py", BOT, "text/x-python", 400),
    ("very-long", "e15", "b" * 5000 + ".py", BOT, "text/x-python", 400),
    ("bad-name-dots", "../etc", "bot.py", BOT, "text/x-python", 400),
    ("bad-name-slash", "a/b", "bot.py", BOT, "text/x-python", 400),
    ("bad-name-unicode", "bøt", "bot.py", BOT, "text/x-python", 400),
    ("bad-name-long", "n" * 300, "bot.py", BOT, "text/x-python", 400),
    ("bad-name-empty", "", "bot.py", BOT, "text/x-python", 400),
    ("sample-name", "random", "bot.py", BOT, "text/x-python", 403),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_bad_upload_is_refused_and_leaves_nothing(bench: Bench, case: tuple) -> None:
    _, name, filename, data, ctype, status = case
    served, client, token = bench.take(2)
    before = footprint(served)
    if "/" in name or not name:  # names a URL cannot carry go through the web form
        r = client.upload("/submit", {"name": name, "csrf_token": client.csrf("/submit")}, filename, data)
    else:
        r = client.upload(
            f"/api/bots/{quote(name)}/versions",
            {},
            filename,
            data,
            headers={"Authorization": f"Bearer {token}"},
            content_type=ctype,
        )
    assert r.status == status, (r.status, r.text[:300])
    assert "Traceback" not in r.text
    assert footprint(served) == before
    assert served.alive()


def test_nul_byte_in_the_file_name_is_refused(bench: Bench) -> None:
    served, client, _ = bench.take()
    before = footprint(served)
    r = client.upload("/submit", {"name": "nulbot", "csrf_token": client.csrf("/submit")}, "bot\0.py", BOT)
    assert r.status == 400 and "Traceback" not in r.text
    assert footprint(served) == before


def test_oversized_with_content_length_is_refused_before_the_body(bench: Bench) -> None:
    served, client, token = bench.take(3)
    before = footprint(served)
    size = 64 * 1_000_000
    head = (
        f"POST /api/bots/big/versions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: {size}\r\n\r\n"
    ).encode()
    answer = raw_exchange(served, head, [])  # the head alone: the server must not wait for 64 MB
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # just over the limit, sent in full: refused with 413 too
    r = client.upload(
        "/api/bots/big/versions", {}, "big.py", b"#" * (LIMIT + 70_000), {"Authorization": f"Bearer {token}"}
    )
    assert r.status == 413
    # within the transport limit but over the file limit (form overhead allowance): still 413
    r = client.upload(
        "/api/bots/big/versions", {}, "big.py", b"#" * (LIMIT + 10), {"Authorization": f"Bearer {token}"}
    )
    assert r.status == 413, r.text[:300]
    assert footprint(served) == before
    assert served.alive()


def test_chunked_upload_without_length_is_refused(bench: Bench) -> None:
    served, client, token = bench.take(2)
    before = footprint(served)
    body, ctype = multipart({}, "bot.py", BOT)
    for path, extra in (
        ("/api/bots/chunky/versions", f"Authorization: Bearer {token}\r\n"),
        ("/submit", "Cookie: " + "; ".join(f"{k}={v}" for k, v in client.cookies.items()) + "\r\n"),
    ):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\n{extra}Content-Type: {ctype}\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n"
        ).encode()
        chunks = [b"%x\r\n" % len(body) + body + b"\r\n"] + [b"100000\r\n" + b"#" * 0x100000 + b"\r\n"] * 8
        answer = raw_exchange(served, head, [*chunks, b"0\r\n\r\n"])
        assert answer.startswith(b"HTTP/1.1 411"), answer[:200]
    assert footprint(served) == before
    assert served.alive()


def test_identical_reupload_writes_nothing(bench: Bench) -> None:
    served, client, token = bench.take(2)
    auth = {"Authorization": f"Bearer {token}"}
    first = client.upload("/api/bots/evebot/versions", {}, "bot.py", BOT, auth)
    assert first.status == 202, first.text[:300]
    assert wait_status(served, "evebot", 1) == "active"
    before = footprint(served)
    again = client.upload("/api/bots/evebot/versions", {}, "other_name.py", BOT, auth)
    assert again.status == 409
    assert footprint(served) == before
