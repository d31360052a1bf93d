"""The web side of live matches: receive the referee's events, apply them, wake the watchers.

One :class:`LiveHub` per web process binds the database's live channel (:mod:`.channel`) and
reads it on a thread of its own.  Each match being played has a :class:`Feed`: the engine's
states after every event so far (applied here with the rules engine, exactly as the replay
viewer's data is built) and each step already in the viewer's format.  A message that does not
follow (the hub started mid-match, or a datagram was lost) is ignored until the next
resynchronising message rebuilds the feed from the whole record.

Watchers never hold anything up: a watcher is a coalescing wake-up flag (set with
``call_soon_threadsafe`` on its event loop; setting it twice is one wake-up) plus the number of
the last step it was sent.  When woken it takes every step after that one from the feed, so a
slow watcher gets a bigger batch later, a disconnected one is simply forgotten, and the reader
thread never blocks on anyone: the bounded queue of each watcher is its one pending flag.
Finished or silent feeds are dropped after :data:`FEED_TTL` seconds; at most :data:`MAX_FEEDS`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import socket
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.engine import State, apply, apply_throw, new_game, parse_action
from arena.engine.notation import parse_throw
from arena.engine.variants import by_version
from arena.web.viewdata import _event_view, state_view

FEED_TTL = 120.0
MAX_FEEDS = 256
RECV_BYTES = 262_144
INBOX = 100_000

log = logging.getLogger(__name__)


def _next_state(state: State, event: dict[str, Any]) -> State:
    if "throw" in event:
        return apply_throw(state, parse_throw(str(event["throw"])))
    return apply(state, parse_action(str(event["action"])))


@dataclass
class Step:
    """One step in the viewer's format: the event and the state after it, and when the referee
    applied it (wall clock, seconds)."""

    k: int
    event: dict[str, Any]
    state: dict[str, Any]
    ts: float


@dataclass
class Feed:
    """A match being watched: its header, its latest engine state and every step so far."""

    match_id: int
    header: dict[str, Any]
    initial: dict[str, Any]
    state: State
    steps: list[Step] = field(default_factory=list)
    updated: float = field(default_factory=time.monotonic)

    @property
    def count(self) -> int:
        return len(self.steps)

    @classmethod
    def from_record(cls, match_id: int, text: str, ts: float) -> Feed:
        """A feed rebuilt from the record so far (header and event lines)."""
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        header = lines[0]
        state = new_game(int(header["players"]), by_version(str(header.get("rules", "1"))))
        feed = cls(match_id, header, state_view(state), state)
        for event in lines[1:]:
            feed.add(event, ts)
        return feed

    def add(self, event: dict[str, Any], ts: float) -> Step:
        before = self.state
        self.state = _next_state(before, event)
        k = self.count + 1
        step = Step(k, _event_view(k, event, before), state_view(self.state), ts)
        self.steps.append(step)
        self.updated = time.monotonic()
        return step

    def since(self, k: int) -> list[Step]:
        """Steps ``k+1 ..``."""
        return self.steps[max(0, k) :]


class Watcher:
    """One watcher of one match: a wake-up flag on its own event loop.  At most one wake-up is
    pending at a time (its bounded queue holds one item): notifying a watcher that has not
    woken up yet does nothing."""

    def __init__(self, match_id: int, loop: asyncio.AbstractEventLoop) -> None:
        self.match_id = match_id
        self.loop = loop
        self.wake = asyncio.Event()
        self.pending = False
        self.notified = 0  # wake-ups actually scheduled (for tests)

    def notify(self) -> None:
        """From any thread; never blocks (a closed loop: the watcher is gone, ignored)."""
        if self.pending:
            return
        self.pending = True
        self.notified += 1
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.wake.set)

    def clear(self) -> None:
        """On the watcher's loop, before it reads the feed: later events wake it again."""
        self.pending = False
        self.wake.clear()


class LiveHub:
    """Receives live events on ``path`` and keeps the feeds (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.feeds: dict[int, Feed] = {}
        self.watchers: dict[int, set[Watcher]] = {}
        self.lock = threading.Lock()
        self.received = 0
        self.ignored = 0
        self._stop = threading.Event()
        self._inbox: deque[bytes] = deque(maxlen=INBOX)  # received, not applied yet (oldest dropped)
        self._arrived = threading.Event()
        self.sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> LiveHub:
        """Bind the channel (replacing a stale socket file) and start reading."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * RECV_BYTES)
        sock.bind(str(self.path))
        sock.settimeout(0.5)
        self.sock = sock
        self._thread = threading.Thread(target=self._run, name="arena-live-hub", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        if self.sock is not None:
            self.sock.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)

    def _run(self) -> None:
        """Read datagrams as fast as they come (the kernel queues only a few per socket) and
        hand them to the applying thread."""
        assert self.sock is not None
        applier = threading.Thread(target=self._apply_loop, name="arena-live-apply", daemon=True)
        applier.start()
        while not self._stop.is_set():
            try:
                data = self.sock.recv(RECV_BYTES)
            except TimeoutError:
                self._expire()
                continue
            except OSError:
                break
            self._inbox.append(data)
            self._arrived.set()
        self._arrived.set()
        applier.join(5.0)

    def _apply_loop(self) -> None:
        while not self._stop.is_set():
            self._arrived.wait(0.5)
            self._arrived.clear()
            while self._inbox:
                data = self._inbox.popleft()
                try:
                    self.receive(json.loads(data))
                except Exception as exc:  # a bad message is dropped, never the hub
                    self.ignored += 1
                    log.debug("live: ignoring a message: %s", exc)

    def receive(self, message: dict[str, Any]) -> None:
        """Apply one message (see :mod:`.publish` for its fields) and wake the match's watchers."""
        mid, k, ts = int(message["m"]), int(message["k"]), float(message.get("ts", time.time()))
        self.received += 1
        with self.lock:
            feed = self.feeds.get(mid)
            if feed is not None and k == feed.count + 1:
                feed.add(json.loads(message["l"]), ts)
            elif "f" in message and (feed is None or k > feed.count or k == 1):  # k 1: a new attempt
                text = zlib.decompress(base64.b64decode(message["f"])).decode()
                self.feeds[mid] = Feed.from_record(mid, text, ts)
                self._trim()
            else:  # out of step (joined mid-match, a lost datagram): wait for the next resync
                self.ignored += 1
                return
            watchers = list(self.watchers.get(mid, ()))
        for w in watchers:
            w.notify()

    def _trim(self) -> None:
        while len(self.feeds) > MAX_FEEDS:
            oldest = min(self.feeds.values(), key=lambda f: f.updated)
            del self.feeds[oldest.match_id]

    def _expire(self) -> None:
        now = time.monotonic()
        with self.lock:
            for mid in [m for m, f in self.feeds.items() if now - f.updated > FEED_TTL]:
                if not self.watchers.get(mid):
                    del self.feeds[mid]

    def feed(self, match_id: int) -> Feed | None:
        with self.lock:
            return self.feeds.get(match_id)

    def steps_since(self, match_id: int, k: int) -> tuple[Feed | None, list[Step]]:
        """The match's feed and its steps after ``k`` (a copy: safe to use outside the lock)."""
        with self.lock:
            feed = self.feeds.get(match_id)
            return feed, ([] if feed is None else list(feed.since(k)))

    def watch(self, match_id: int, loop: asyncio.AbstractEventLoop) -> Watcher:
        w = Watcher(match_id, loop)
        with self.lock:
            self.watchers.setdefault(match_id, set()).add(w)
        return w

    def unwatch(self, w: Watcher) -> None:
        with self.lock:
            group = self.watchers.get(w.match_id)
            if group is not None:
                group.discard(w)
                if not group:
                    del self.watchers[w.match_id]
