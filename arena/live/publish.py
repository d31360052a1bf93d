"""The worker side of live matches: an ``on_event`` observer that sends each event and never waits.

:func:`observer` returns the callback a :class:`arena.referee.match.Match` calls after every
applied throw or action (``on_event``).  It sends one datagram (see :mod:`.channel`): the match's
database id, the event's number, the record line the referee just wrote and the wall-clock time
it was applied; every :data:`~.channel.RESYNC` events (and at the first and the last) the whole
record so far, zlib-compressed.  Any error (nobody listening, a full buffer, a message too big)
drops the event: a watcher costs the referee one non-blocking system call per event; nobody
listening costs one failed call per second (:data:`ABSENT_RETRY`), and nothing when the channel
is not configured.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import time
import zlib
from collections.abc import Callable
from typing import Any

from .channel import LIVE_ENV, MAX_DATAGRAM, RESYNC, socket_path
from .remote import MAX_UDP, LiveTarget, sign

Observer = Callable[[Any], None]
ABSENT_RETRY = 1.0
"""Seconds the publisher stays quiet after finding nobody listening."""


class Publisher:
    """Sends live events to one channel path; one non-blocking datagram socket."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.sent = 0
        self.dropped = 0
        self.absent_until = 0.0  # nobody listened at the last try: no message is built until then

    def listening(self) -> bool:
        """False for :data:`ABSENT_RETRY` s after a send found nobody listening (then the
        observer does not even build its messages; a listener that appears meanwhile catches up
        at the next resynchronising message)."""
        return time.monotonic() >= self.absent_until

    def send(self, message: dict[str, Any]) -> bool:
        """Send one message; False (and nothing else) when it could not be sent at once."""
        data = json.dumps(message, separators=(",", ":")).encode()
        if len(data) > MAX_DATAGRAM:
            self.dropped += 1
            return False
        try:
            self.sock.sendto(data, self.path)
        except (FileNotFoundError, ConnectionRefusedError):  # nobody listening
            self.absent_until = time.monotonic() + ABSENT_RETRY
            self.dropped += 1
            return False
        except OSError:  # the listener is behind (buffer full), too big: the event is dropped
            self.dropped += 1
            return False
        self.sent += 1
        return True

    def observer(self, match_id: int) -> Observer:
        """The ``on_event`` callback for the match stored as ``match_id``."""

        def on_event(match: Any) -> None:
            if not self.listening():
                return
            record = getattr(match, "record", None)
            if record is None or len(record.lines) < 2:
                return
            k = int(match.events)
            message: dict[str, Any] = {"m": match_id, "k": k, "l": record.lines[-1], "ts": time.time()}
            over = getattr(getattr(match, "state", None), "is_over", False)
            if k == 1 or k % RESYNC == 0 or over:  # the last one too: the hub sees the match end
                text = "\n".join(record.lines) + "\n"
                message["f"] = base64.b64encode(zlib.compress(text.encode(), 1)).decode()
            self.send(message)

        return on_event


class UdpPublisher(Publisher):
    """Sends live events, signed (:mod:`.remote`), to a hub's UDP endpoint on another host: the
    same messages and the same rules (one non-blocking ``sendto``; dropped on any error)."""

    def __init__(self, target: LiveTarget) -> None:
        self.target = target
        self.path = target.address
        family, _, _, _, addr = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_DGRAM)[0]
        self.addr: Any = addr
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.sent = 0
        self.dropped = 0
        self.absent_until = 0.0

    def send(self, message: dict[str, Any]) -> bool:
        data = sign(self.target.key, json.dumps(message, separators=(",", ":")).encode())
        if len(data) > MAX_UDP:  # a resync of a very long record: the watcher reads the replay
            self.dropped += 1
            return False
        try:
            self.sock.sendto(data, self.addr)
        except OSError:  # a full buffer, no route, a refusal reported by ICMP: dropped
            self.dropped += 1
            return False
        self.sent += 1
        return True


_publisher: Publisher | None = None
_remote: UdpPublisher | None = None


def observer_for(match_id: int, remote: LiveTarget | None = None) -> Observer | None:
    """The live observer of match ``match_id``: to the hub's UDP endpoint ``remote`` when the
    match task carries one (a Dask cluster's match), else to the Unix channel
    ``$ARENA_LIVE_SOCKET`` names (set in the local workers of the ladder and of ``arena serve``'s
    validation: :class:`arena.tournament.runner.LocalExecutor`'s ``live_socket``), else None."""
    global _remote
    if remote is not None:
        if _remote is None or _remote.target != remote:
            try:
                _remote = UdpPublisher(remote)
            except OSError:  # the hub's host does not resolve here: not followed live
                return None
        return _remote.observer(match_id)
    path = os.environ.get(LIVE_ENV)
    return _unix_observer(path, match_id) if path else None


def observer_of_database(database_url: str, match_id: int) -> Observer:
    """The live observer of a match played outside the workers (a person's game, :mod:`arena.humanseat`),
    publishing to the live channel of its database (:func:`~.channel.socket_path`): whichever web
    process of that database holds the channel (``arena serve``, ``arena web``, or ``arena play``'s
    own) follows the match live."""
    return _unix_observer(str(socket_path(database_url)), match_id)


def _unix_observer(path: str, match_id: int) -> Observer:
    """The observer of ``match_id`` on the Unix channel ``path`` (one publisher per process,
    replaced when the path changes)."""
    global _publisher
    if _publisher is None or _publisher.path != path:
        _publisher = Publisher(path)
    return _publisher.observer(match_id)
