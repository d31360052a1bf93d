"""Live matches from other hosts: the hub's signed UDP endpoint (Dask workers, ``--cluster``).

A Unix socket reaches only the workers on the web server's machine.  When told to (``arena serve
--live-address HOST:PORT``, the environment variable :data:`UDP_ENV`, or by default with
``arena serve --cluster``), the hub also listens on a UDP socket: the same messages (see
:mod:`.publish`), each one signed.  A datagram is ``MAGIC + HMAC-SHA256(key, payload) +
payload``; the key is 32 random bytes drawn by each hub when it starts, so nobody on the network
who lacks it can inject moves: the hub drops every datagram whose signature does not match.

The coordinator (``arena serve --cluster``, ``arena ladder run --cluster``, a tournament on a
cluster) learns the endpoint and its key from the file :func:`endpoint_path` next to the Unix
socket (mode 0600, written by the hub, removed when it closes) and sends them with each match
task (:class:`LiveTarget`; an endpoint bound to every interface is given as the coordinator's
address towards the scheduler) over the Dask connection; the worker's observer then sends there with
the same never-wait rules (a non-blocking ``sendto``, the event dropped on any error).  A signed
message bigger than :data:`MAX_UDP` is not sent (a resync of a very long record: the watcher
gets the rest from the stored replay when the match ends).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from arena.safetext import small_int

UDP_ENV = "ARENA_LIVE_UDP"
"""``HOST:PORT`` the hub's UDP endpoint binds (port 0: any free port); unset: no UDP endpoint."""
MAGIC = b"AL1"
MAC_BYTES = 32
MAX_UDP = 65_000
"""Bytes of a signed datagram at most (a UDP payload over IPv4 is at most 65,507 bytes)."""
RECHECK = 1.0
"""Seconds between looks at the endpoint file (the web server may restart with a new key)."""


@dataclass(frozen=True)
class LiveTarget:
    """Where a worker sends a match's live events over UDP, and the key it signs them with."""

    host: str
    port: int
    key: bytes

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def sign(key: bytes, payload: bytes) -> bytes:
    """The datagram carrying ``payload`` signed with ``key``."""
    return MAGIC + hmac.new(key, payload, hashlib.sha256).digest() + payload


def verify(key: bytes, data: bytes) -> bytes | None:
    """The payload of a datagram signed with ``key``, or None (unsigned, or badly signed)."""
    head = len(MAGIC) + MAC_BYTES
    if len(data) < head or not data.startswith(MAGIC):
        return None
    payload = data[head:]
    mac = hmac.new(key, payload, hashlib.sha256).digest()
    return payload if hmac.compare_digest(mac, data[len(MAGIC) : head]) else None


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` for IPv6) as (host, port); ValueError saying what is wrong."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    number = small_int(port)
    if not sep or not host or number is None or not 0 <= number <= 65535:
        raise ValueError(f"bad live address {text!r}: give HOST:PORT, e.g. 0.0.0.0:0 (port 0: any free port)")
    return host, number


def endpoint_path(socket_path: Path) -> Path:
    """The file where the hub of the Unix channel ``socket_path`` states its UDP endpoint."""
    return Path(f"{socket_path}.udp")


def write_endpoint(path: Path, target: LiveTarget) -> None:
    """Write the endpoint file (owner-only: it holds the key), atomically."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # a stale one: created afresh below (never through a planted link)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"host": target.host, "port": target.port, "key": target.key.hex()}, fh)
    os.replace(tmp, path)


def read_endpoint(path: Path) -> LiveTarget | None:
    """The endpoint stated in ``path``, or None (no file, unreadable or damaged)."""
    try:
        data = json.loads(path.read_text())
        return LiveTarget(str(data["host"]), int(data["port"]), bytes.fromhex(str(data["key"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove_endpoint(path: Path, target: LiveTarget) -> None:
    """Remove the endpoint file if it still states ``target`` (a newer hub's file is kept)."""
    if read_endpoint(path) == target:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class EndpointWatch:
    """The coordinator's view of the endpoint file: :meth:`current` reads it at most every
    :data:`RECHECK` seconds (and again only when it changed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[float, int] | None = None
        self._target: LiveTarget | None = None
        self._checked = float("-inf")

    def current(self) -> LiveTarget | None:
        now = time.monotonic()
        if now - self._checked < RECHECK:
            return self._target
        self._checked = now
        try:
            st = self.path.stat()
        except OSError:
            self._seen, self._target = None, None
            return None
        seen = (st.st_mtime, st.st_ino)
        if seen != self._seen:
            self._seen, self._target = seen, read_endpoint(self.path)
        return self._target
