"""The live channel: a Unix datagram socket, one per database, owned by the web process.

Why a datagram socket: the referee runs in worker processes (spawned by the coordinator), the
web app in another process, and a watcher must cost the referee nothing.  A non-blocking
``sendto`` of one datagram per event is a single system call; when nobody listens (no socket
bound), or the listener is behind and its receive buffer is full, the send fails at once and
the event is dropped -- the referee never waits and keeps no queue.  The web process rebuilds
what it missed from a resynchronising message the publisher sends every :data:`RESYNC`
events (the whole record so far, compressed).  A store table would cost the referee a database
write per event (and the web a poll); a multiprocessing queue would tie the workers to one
web process started before them.

The socket's path is derived from the database URL (both sides know it), under the system's
temporary folder (a Unix socket path is limited to 108 bytes), or set with ``ARENA_LIVE_SOCKET``.
Workers learn it from that variable, which their pool sets in each of them as it starts
(``LocalExecutor(live_socket=...)``); the coordinator's own environment is left alone.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

LIVE_ENV = "ARENA_LIVE_SOCKET"
RESYNC = 40
"""Every this many events a message carries the whole record so far (a late watcher catches up)."""
MAX_DATAGRAM = 200_000
"""Bytes; a bigger message is not sent (a resync is retried at the next multiple)."""


def socket_path(database_url: str) -> Path:
    """The live channel of the database at ``database_url`` (``$ARENA_LIVE_SOCKET`` wins)."""
    given = os.environ.get(LIVE_ENV)
    if given:
        return Path(given)
    digest = hashlib.sha256(database_url.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"arena-live-{os.getuid()}-{digest}.sock"
