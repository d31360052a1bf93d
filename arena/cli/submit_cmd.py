"""``arena submit FILE --name NAME --server URL``: upload a bot to an arena server, wait for its
validation and print the result.

The token (a personal API token from the server's account page or ``arena users token``) comes
from ``$ARENA_TOKEN``, else from the config file ``$XDG_CONFIG_HOME/pool-arena/config.toml``
(default ``~/.config/pool-arena/config.toml``), which may also name the server::

    server = "http://arena.example.org:8000"
    token = "arena_..."

The bot's name is checked on the client with the server's own rule, and the file's size against
the server's default upload limit (5 MB; ``$ARENA_MAX_UPLOAD_MB`` when set, as on the server),
before anything is sent.

Exit status: 0 the version is active, 3 it was rejected (the reason and its stderr tail are
printed), 1 the server refused the upload (a file over the size limit too) or could not be
reached, 2 bad usage (a bad bot name, a folder or a missing file, a server URL without
``http://`` or ``https://``).
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import sys
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.submission.files import (
    MAX_UPLOAD_MB_ENV,
    UploadError,
    check_bot_name,
    max_upload_bytes,
    too_large_message,
)

from .common import fail

TOKEN_ENV = "ARENA_TOKEN"
SERVER_ENV = "ARENA_SERVER"
FINAL = ("active", "rejected", "retired")


def config_path() -> Path:
    """Where the submit configuration lives."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pool-arena" / "config.toml"


def _config() -> dict[str, Any]:
    path = config_path()
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise fail(f"cannot read {path}: {exc}", 2) from None


def _multipart(fields: dict[str, str], filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = "arena-" + secrets.token_hex(12)
    out = bytearray()
    for key, value in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
    safe = filename.replace('"', "_")
    out += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe}"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    out += data + f"\r\n--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


class _Sent:
    """What went wrong while a request was sent (a broken pipe or a reset: the server answered
    early and closed the connection, e.g. a 413 for a file over its size limit)."""

    def __init__(self) -> None:
        self.error: OSError | None = None


class _KeepSending:
    """A connection that notes a broken pipe (or reset) while it sends instead of failing, so
    that the server's early answer (sent before it read the body) is still read."""

    sent: _Sent

    def send(self, data: Any) -> None:
        if self.sent.error is not None:
            return
        try:
            super().send(data)  # type: ignore[misc]
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.sent.error = exc


class _HTTP(_KeepSending, http.client.HTTPConnection):
    pass


class _HTTPS(_KeepSending, http.client.HTTPSConnection):
    pass


class _Handler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    def __init__(self, sent: _Sent) -> None:
        urllib.request.HTTPHandler.__init__(self)
        urllib.request.HTTPSHandler.__init__(self)
        self.sent = sent

    def _connection(self, kind: type[http.client.HTTPConnection]) -> Any:
        def make(host: str, **kwargs: Any) -> http.client.HTTPConnection:
            connection = kind(host, **kwargs)
            connection.sent = self.sent  # type: ignore[attr-defined]
            return connection

        return make

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection(_HTTP), req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection(_HTTPS), req, context=self._context)  # type: ignore[attr-defined]


def _call(
    url: str, token: str, *, body: bytes | None = None, content_type: str | None = None
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    sent = _Sent()
    opener = urllib.request.build_opener(_Handler(sent))
    try:
        request = urllib.request.Request(url, data=body, headers=headers, method="POST" if body else "GET")
        with opener.open(request, timeout=60) as response:
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
            return answer
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read()).get("detail", exc.reason)
        except (ValueError, AttributeError, OSError):
            detail = exc.reason
        raise fail(f"the server refused it ({exc.code}): {detail}", 1) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        if sent.error is not None:
            raise fail(
                f"the server {url} closed the connection during the upload ({sent.error.strerror}), "
                f"possibly because the file is over its size limit",
                1,
            ) from None
        if isinstance(exc, http.client.HTTPException) and not isinstance(exc, http.client.InvalidURL):
            raise fail(f"bad answer from the server {url}: {exc!r}", 1) from None
        if isinstance(exc, http.client.InvalidURL):
            raise fail(f"cannot send the request: {exc}", 1) from None
        reason = getattr(exc, "reason", exc)
        raise fail(f"cannot reach the server {url}: {reason}", 1) from None
    except (UnicodeError, ValueError) as exc:  # a URL or a header the client cannot encode
        raise fail(f"cannot send the request to {url!r}: {exc}", 1) from None


def _server_url(given: str) -> str:
    """The server's base URL, or a usage error (exit 2) when it is not an http(s) URL."""
    parts = urllib.parse.urlsplit(given)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise fail(
            f"bad server URL {given!r}: add http:// or https:// (e.g. http://{given.split('://')[-1]})", 2
        )
    return given


def submit(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="the bot's file (a script or an executable)")],
    name: Annotated[str, typer.Option("--name", help="the bot's name on the server")],
    server: Annotated[
        str | None, typer.Option("--server", help="the server's URL (else $ARENA_SERVER or the config file)")
    ] = None,
    keep_previous: Annotated[
        bool, typer.Option("--keep-previous", help="keep the current version active as well")
    ] = False,
    wait: Annotated[
        float, typer.Option(min=0.0, help="seconds to wait for the validation (0: do not wait)")
    ] = 300.0,
) -> None:
    """Upload a bot to an arena server, wait for its validation and print the result."""
    config = _config()
    token = os.environ.get(TOKEN_ENV) or str(config.get("token") or "")
    try:
        check_bot_name(name)
    except UploadError as exc:
        raise fail(str(exc), 2) from None
    base = (server or os.environ.get(SERVER_ENV) or str(config.get("server") or "")).rstrip("/")
    if not base:
        raise fail(f"no server: give --server URL (or set {SERVER_ENV}, or 'server' in {config_path()})", 2)
    base = _server_url(base)
    if not token:
        raise fail(
            f'no API token: set {TOKEN_ENV} or put token = "..." in {config_path()} '
            f"(make one on the server's account page)",
            2,
        )
    if file.is_dir():
        raise fail(f"{file} is a folder: give the bot's file (a script or an executable)", 2)
    if not file.is_file():
        raise fail(f"{file}: no such file", 2)
    limit = max_upload_bytes()
    try:
        with file.open("rb") as handle:  # never more than one byte past the limit in memory
            data = handle.read(limit + 1)
            size = max(len(data), file.stat().st_size)
    except OSError as exc:
        raise fail(f"cannot read {file}: {exc.strerror or exc}", 2) from None
    if len(data) > limit:
        raise fail(
            f"{file}: {too_large_message(size, limit)}: nothing was sent "
            f"(if the server allows more, set {MAX_UPLOAD_MB_ENV} to its limit)",
            1,
        )
    body, content_type = _multipart({"keep_previous": "true" if keep_previous else "false"}, file.name, data)
    quoted = urllib.parse.quote(name, safe="")
    answer = _call(f"{base}/api/bots/{quoted}/versions", token, body=body, content_type=content_type)
    version = answer.get("version")
    typer.echo(f"uploaded {name} version {version} ({answer.get('status')}); validating ...", err=True)
    status_url = f"{base}{answer.get('status_url')}"
    deadline = time.monotonic() + wait
    state = answer
    while wait and state.get("status") not in FINAL and time.monotonic() < deadline:
        time.sleep(1.0)
        state = _call(status_url, token)
    status = str(state.get("status"))
    typer.echo(f"{name} version {version}: {status}")
    if state.get("reason"):
        typer.echo(f"reason: {state['reason']}")
    tail = state.get("stderr_tail")
    if status == "rejected" and tail:
        typer.echo("its stderr, last lines:")
        for line in str(tail).rstrip().splitlines()[-20:]:
            typer.echo(f"  | {line}")
    for m in state.get("validation_matches", []):
        typer.echo(f"validation match {m['id']}: {m['status']}  {base}/matches/{m['id']}")
    typer.echo(f"its page: {base}/bots/{quoted}")
    if status == "rejected":
        raise typer.Exit(3)
    if status not in FINAL:
        typer.echo(f"still {status} after {wait:g} s: see its page later", err=True)
    sys.stdout.flush()
