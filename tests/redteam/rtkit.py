"""Hostile-client kit: a real ``arena serve`` (or ``arena play``) subprocess on a free port, a
cookie-keeping raw HTTP client (``http.client``: no library smooths what we send), multipart
bodies built by hand, and read-only looks into the server's SQLite file and ARENA_HOME.

Nothing here is a mock: every request crosses a real socket to the real server.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ARENA = Path(sys.executable).parent / "arena"
REPO = Path(__file__).resolve().parents[2]
GOOD_BOT = REPO / "bots" / "random_bot.py"
CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
URL_RE = re.compile(r"Pool Arena server: (http://\S+?)/?\s")


def quiet_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a server under test: its own ARENA_HOME, no ladder, no inherited token."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_TOKEN", "ARENA_DATABASE_URL", "COLUMNS")}
    env["ARENA_HOME"] = str(home)
    env["ARENA_LADDER"] = "0"
    env.update(extra)
    return env


class Served:
    """``arena serve --port 0 --jobs 1 ARGS`` in its own process group, its output in ``log``."""

    def __init__(self, home: Path, *args: str, **env: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.log = home.parent / f"{home.name}-serve.log"
        self.out = self.log.open("wb")
        self.proc = subprocess.Popen(
            [str(ARENA), "serve", "--port", "0", "--jobs", "1", *args],
            env=quiet_env(home, **env),
            cwd=home,
            stdin=subprocess.DEVNULL,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = self._wait_url()
        parsed = urllib.parse.urlparse(self.url)
        self.host, self.port = parsed.hostname or "127.0.0.1", int(parsed.port or 80)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def _wait_url(self, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = URL_RE.findall(self.output())
            if found:
                return str(found[-1]).rstrip("/")
            if self.proc.poll() is not None:
                raise AssertionError(f"arena serve exited {self.proc.returncode}:\n{self.output()}")
            time.sleep(0.1)
        raise AssertionError(f"arena serve did not start:\n{self.output()}")

    def alive(self) -> bool:
        """The process runs and answers a plain page."""
        if self.proc.poll() is not None:
            return False
        return Client(self).get("/rules").status == 200

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self.out.close()

    # --- read-only looks at what the server keeps

    def db_path(self) -> Path:
        return self.home / "arena.db"

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(f"file:{self.db_path()}?mode=ro", uri=True, timeout=30)
        try:
            return list(con.execute(sql).fetchall())
        finally:
            con.close()

    def count(self, table: str) -> int:
        return int(self.rows(f"SELECT COUNT(*) FROM {table}")[0][0])

    def stored_files(self) -> set[str]:
        """Every file under ARENA_HOME except the database and the logs (what uploads leave)."""
        out = set()
        for p in self.home.rglob("*"):
            rel = p.relative_to(self.home).as_posix()
            if p.is_file() and not rel.startswith(("arena.db", "logs/")) and not rel.endswith(".log"):
                out.add(rel)
        return out

    def raw_store_bytes(self) -> bytes:
        """The database file and its WAL, as bytes (to look for secrets in clear)."""
        data = b""
        for suffix in ("", "-wal", "-journal"):
            p = Path(str(self.db_path()) + suffix)
            if p.exists():
                data += p.read_bytes()
        return data


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def cookies_set(self) -> list[str]:
        return [v for k, v in self.headers if k.lower() == "set-cookie"]

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Client:
    """A browser-like client: it keeps cookies, never follows redirects, sends exactly what it is given."""

    server: Any
    cookies: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=self.timeout)
        sent = dict(headers or {})
        if self.cookies and "Cookie" not in sent:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            conn.request(method, path, body=body, headers=sent)
            r = conn.getresponse()
            data = r.read()
            answer = Answer(r.status, r.getheaders(), data)
        finally:
            conn.close()
        for cookie in answer.cookies_set():
            name, _, rest = cookie.partition("=")
            value = rest.split(";", 1)[0]
            if "max-age=0" in cookie.lower() or value in ('""', ""):
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return answer

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.request("GET", path, headers=headers)

    def csrf(self, path: str = "/login") -> str:
        page = self.get(path)
        found = CSRF_RE.search(page.text)
        assert found, f"no CSRF token on {path} ({page.status}): {page.text[:300]}"
        return found.group(1)

    def form(self, path: str, fields: dict[str, str], headers: dict[str, str] | None = None) -> Answer:
        sent = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        return self.request("POST", path, urllib.parse.urlencode(fields).encode(), sent)

    def upload(
        self,
        path: str,
        fields: dict[str, str],
        filename: str,
        data: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "text/x-python",
    ) -> Answer:
        body, ctype = multipart(fields, filename, data, content_type)
        return self.request("POST", path, body, {"Content-Type": ctype, **(headers or {})})


def multipart(
    fields: dict[str, str], filename: str, data: bytes, content_type: str = "text/x-python"
) -> tuple[bytes, str]:
    """A multipart/form-data body with ``fields`` and one file part (the file name sent verbatim)."""
    boundary = "rt" + secrets.token_hex(12)
    out = b""
    for k, v in fields.items():
        out += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n'.encode()
            + v.encode()
            + b"\r\n"
        )
    out += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="'.encode()
        + filename.encode("utf-8", errors="surrogateescape")
        + f'"\r\nContent-Type: {content_type}\r\n\r\n'.encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return out, f"multipart/form-data; boundary={boundary}"


def sign_up(server: Served, name: str, password: str | None = None) -> Client:
    """A new user signed in (password: ``name`` + 'password' unless given)."""
    c = Client(server)
    pw = password or name + "-password"
    token = c.csrf("/signup")
    r = c.form("/signup", {"username": name, "password": pw, "password2": pw, "csrf_token": token})
    assert r.status == 303, (r.status, r.text[:500])
    assert "arena_session" in c.cookies
    return c


def api_token(c: Client) -> str:
    """A fresh personal API token of the signed-in client (from the account page)."""
    made = c.form("/account/tokens", {"name": "rt", "csrf_token": c.csrf("/account")})
    assert made.status == 303, (made.status, made.text[:300])  # Post/Redirect/Get
    r = c.get("/account")  # the new token is shown once, on this page
    found = re.search(r"arena_[A-Za-z0-9_-]{40,}", r.text)
    assert found, r.text[:500]
    return found.group(0)


def wait_status(server: Served, bot: str, version: int, timeout: float = 180.0) -> str:
    """Poll the API until the version is active or rejected; its final status."""
    c = Client(server)
    deadline = time.monotonic() + timeout
    status = "?"
    while time.monotonic() < deadline:
        r = c.get(f"/api/bots/{bot}/versions/{version}")
        if r.status == 200:
            status = r.json()["status"]
            if status in ("active", "rejected"):
                return str(status)
        time.sleep(0.5)
    raise AssertionError(f"{bot} v{version} still {status} after {timeout} s")


def raw_exchange(server: Served, head: bytes, body_chunks: list[bytes], timeout: float = 60.0) -> bytes:
    """Send raw bytes (a request head and its body, piece by piece) and return the first answer
    bytes (up to 4 KB): for bodies no client library would send."""
    with socket.create_connection((server.host, server.port), timeout=timeout) as s:
        try:
            s.sendall(head)
            for chunk in body_chunks:
                s.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early and closed: read what it said
        try:
            return s.recv(4096)
        except ConnectionResetError:
            return b""
