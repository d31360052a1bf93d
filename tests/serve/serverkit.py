"""A real ``arena serve`` subprocess and a small HTTP client with cookies (sessions, CSRF)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARENA = Path(sys.executable).parent / "arena"
REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
GOOD_BOT = REPO / "bots" / "random_bot.py"
CRASH_BOT = REPO / "tests" / "submission" / "crash_bot.py"
CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def serve_env(home: Path, db_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_TOKEN", "COLUMNS")}
    env["ARENA_HOME"] = str(home)
    env["ARENA_DATABASE_URL"] = db_url
    env.update(extra)
    return env


class ServeProcess:
    """``arena serve --port 0 ARGS`` in its own process group; its output goes to ``log``."""

    def __init__(self, home: Path, db_url: str, log: Path, *args: str, **env: str) -> None:
        self.log = log
        self.out = log.open("ab")
        self.proc = subprocess.Popen(
            [str(ARENA), "serve", "--port", "0", *args],
            env=serve_env(home, db_url, **env),
            cwd=home,
            stdin=subprocess.DEVNULL,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = self._wait_url()

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def _wait_url(self, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.findall(r"Pool Arena server: (http://\S+?)/?\s", self.output())
            if found:
                return str(found[-1]).rstrip("/")
            if self.proc.poll() is not None:
                raise AssertionError(f"arena serve exited {self.proc.returncode}:\n{self.output()}")
            time.sleep(0.1)
        raise AssertionError(f"arena serve did not start:\n{self.output()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 150.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self.out.close()
        return self.proc.returncode

    def kill9(self) -> None:
        """SIGKILL the server alone (its workers notice their parent's death and end)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.out.close()


@dataclass
class Answer:
    status: int
    body: str
    headers: dict[str, str]
    url: str

    def json(self) -> Any:
        return json.loads(self.body)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Client:
    """A browser-like HTTP client: a cookie jar, no automatic redirects, forms with CSRF."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect())

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        req = urllib.request.Request(self.base + path, data=body, headers=headers or {}, method=method)
        try:
            with self.opener.open(req, timeout=60) as r:
                return Answer(r.status, r.read().decode(errors="replace"), dict(r.headers), r.url)
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, exc.read().decode(errors="replace"), dict(exc.headers), exc.url)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.request("GET", path, headers=headers)

    def csrf(self, path: str) -> str:
        page = self.get(path)
        found = CSRF_RE.search(page.body)
        assert found, f"no CSRF token on {path} ({page.status}): {page.body[:300]}"
        return found.group(1)

    def post(self, path: str, fields: dict[str, str], csrf_from: str | None = None) -> Answer:
        data = dict(fields)
        if csrf_from is not None:
            data["csrf_token"] = self.csrf(csrf_from)
        body = urllib.parse.urlencode(data).encode()
        return self.request("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})

    def upload(
        self,
        path: str,
        fields: dict[str, str],
        filename: str,
        data: bytes,
        headers: dict[str, str] | None = None,
        csrf_from: str | None = None,
    ) -> Answer:
        values = dict(fields)
        if csrf_from is not None:
            values["csrf_token"] = self.csrf(csrf_from)
        body, ctype = multipart(values, filename, data)
        return self.request("POST", path, body, {"Content-Type": ctype, **(headers or {})})

    def signup(self, name: str, password: str) -> Answer:
        answer = self.post(
            "/signup", {"username": name, "password": password, "password2": password}, csrf_from="/signup"
        )
        assert answer.status == 303, answer
        return answer

    def login(self, name: str, password: str) -> Answer:
        return self.post("/login", {"username": name, "password": password}, csrf_from="/login")

    def token(self) -> str:
        made = self.post("/account/tokens", {"name": "test"}, csrf_from="/account")
        assert made.status == 303, made  # Post/Redirect/Get: the next GET shows the token once
        page = self.get("/account")
        found = re.search(r'<code id="new-token">([^<]+)</code>', page.body)
        assert found, page.body[:500]
        return found.group(1)


def multipart(fields: dict[str, str], filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = "b" + secrets.token_hex(8)
    out = bytearray()
    for k, v in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
    out += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    out += data + f"\r\n--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def wait_status(
    client: Client, bot: str, version: int, token: str | None = None, timeout: float = 180
) -> dict[str, Any]:
    """Poll the version's status until it is final."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    deadline = time.monotonic() + timeout
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        answer = client.get(f"/api/bots/{bot}/versions/{version}", headers=headers)
        assert answer.status == 200, answer
        state = answer.json()
        if state["status"] in ("active", "rejected", "retired"):
            return state
        time.sleep(0.3)
    raise AssertionError(f"{bot} v{version} still {state.get('status')}")
