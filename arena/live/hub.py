"""The web side of live matches: receive the referee's events, apply them, wake the watchers.

One :class:`LiveHub` per web process binds the database's live channel (:mod:`.channel`) and
reads it on a thread of its own.  Each match being played has a :class:`Feed`: its record lines
so far, each applied on arrival with the rules engine (exactly as the replay viewer's data is
built).  The viewer's steps are built from them when a watcher asks, from the nearest of the
engine states kept every :data:`CHECKPOINT` events, so a feed holds about its record's size
whether watched or not.  A message that does not follow (the hub started mid-match, or a
datagram was lost) is ignored until the next resynchronising message rebuilds the feed from
the whole record.

Watchers never hold anything up: a watcher is a coalescing wake-up flag (set with
``call_soon_threadsafe`` on its event loop; setting it twice is one wake-up) plus the number of
the last step it was sent.  When woken it takes every step after that one from the feed, so a
slow watcher gets a bigger batch later, a disconnected one is simply forgotten, and the reader
thread never blocks on anyone: the bounded queue of each watcher is its one pending flag.

Memory does not grow with the matches played (F10): an unwatched feed is dropped
:data:`FINISHED_GRACE` seconds after its game ended (a finished match's watchers read its stored
replay) or :data:`FEED_TTL` seconds after its last event; the feeds hold at most about
:data:`MAX_BYTES` together (unwatched finished feeds are dropped first, then the least recently
updated) and :data:`MAX_FEEDS` in number, and a match longer than :data:`MAX_FEED_BYTES` is not
followed live.  Feeds being watched are kept.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import json
import logging
import os
import secrets
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

from .remote import LiveTarget, endpoint_path, remove_endpoint, verify, write_endpoint

FEED_TTL = 120.0
"""Seconds an unwatched feed that receives nothing is kept (a stalled or abandoned match)."""
FINISHED_GRACE = 10.0
"""Seconds an unwatched feed is kept after its game ended (its watchers then read the stored replay)."""
MAX_FEEDS = 64
"""Feeds kept at most (running matches are a few per worker; the least recently updated go first)."""
MAX_BYTES = 8_000_000
"""Approximate bytes all feeds may hold together (finished feeds are dropped first, then the
least recently updated; feeds being watched are kept)."""
MAX_FEED_BYTES = 4_000_000
"""Approximate bytes one feed may hold: a match whose record grows past it is no longer followed
live (its watchers get the rest from the stored replay when it ends)."""
CHECKPOINT = 32
"""An engine state is kept every this many events; a step's state is rebuilt from the nearest one."""
LINE_OVERHEAD = 120
"""Bytes counted per step besides its record line (the string's header, its time, list slots)."""
STATE_BYTES = 2_000
"""Bytes counted per kept engine state."""
RECV_BYTES = 262_144
INBOX = 100_000
EXPIRE_EVERY = 1.0
"""Seconds between looks for feeds to drop."""

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
    """A match being played: its header, its record lines and when each was applied.

    It keeps the record lines as received (not the viewer's states: those are built when a
    watcher asks, :meth:`since`), the latest engine state (each event is applied on arrival, so a
    line that does not follow the rules is refused at once) and one engine state every
    :data:`CHECKPOINT` events.  A feed only grows: a match started again gets a new feed, so a
    feed's first ``count`` lines never change and may be read outside the hub's lock."""

    match_id: int
    header: dict[str, Any]
    initial: dict[str, Any]
    state: State
    lines: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    checkpoints: list[State] = field(default_factory=list)
    updated: float = field(default_factory=time.monotonic)
    size: int = 0

    def __post_init__(self) -> None:
        if not self.checkpoints:
            self.checkpoints.append(self.state)
        self.size = STATE_BYTES

    @property
    def count(self) -> int:
        return len(self.lines)

    @property
    def over(self) -> bool:
        """True once the game has ended (the feed is only kept for :data:`FINISHED_GRACE` then)."""
        return self.state.is_over

    @classmethod
    def from_record(cls, match_id: int, text: str, ts: float) -> Feed:
        """A feed rebuilt from the record so far (header and event lines)."""
        lines = [x for x in text.splitlines() if x.strip()]
        header = json.loads(lines[0])
        state = new_game(int(header["players"]), by_version(str(header.get("rules", "1"))))
        feed = cls(match_id, header, state_view(state), state)
        for line in lines[1:]:
            feed.add(line, ts)
        return feed

    def add(self, line: str, ts: float) -> None:
        """Apply the record line of the next event (ValueError and the engine's errors when it
        does not follow)."""
        self.state = _next_state(self.state, json.loads(line))
        self.lines.append(line)
        self.times.append(ts)
        self.size += len(line) + LINE_OVERHEAD
        if self.count % CHECKPOINT == 0:
            self.checkpoints.append(self.state)
            self.size += STATE_BYTES
        self.updated = time.monotonic()

    def since(self, k: int, upto: int | None = None) -> list[Step]:
        """Steps ``k+1 .. upto`` (default: all so far) in the viewer's format, built from the
        nearest kept engine state (at most :data:`CHECKPOINT` events replayed before them)."""
        n = self.count if upto is None else min(upto, self.count)
        k = max(0, k)
        if k >= n:
            return []
        base = k // CHECKPOINT
        state = self.checkpoints[base]
        for j in range(base * CHECKPOINT, k):
            state = _next_state(state, json.loads(self.lines[j]))
        steps = []
        for j in range(k, n):
            event = json.loads(self.lines[j])
            after = _next_state(state, event)
            steps.append(Step(j + 1, _event_view(j + 1, event, state), state_view(after), self.times[j]))
            state = after
        return steps

    @property
    def steps(self) -> list[Step]:
        """Every step so far (built now: see :meth:`since`)."""
        return self.since(0)


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


def _listening(path: Path) -> bool:
    """Whether a live process has ``path`` bound (a stale file of a killed one refuses)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


class LiveHub:
    """Receives live events on ``path`` and keeps the feeds (see the module docstring)."""

    def __init__(self, path: Path, udp: tuple[str, int] | None = None) -> None:
        self.path = path
        self.udp = udp  # (host, port) of the signed UDP endpoint to bind too (arena/live/remote.py)
        self.target: LiveTarget | None = None  # that endpoint as bound, and its key
        self.forged = 0  # UDP datagrams dropped for a missing or bad signature
        self.feeds: dict[int, Feed] = {}
        self.watchers: dict[int, set[Watcher]] = {}
        self.lock = threading.Lock()
        self.received = 0
        self.ignored = 0
        self.bytes = 0  # approximate bytes held by the feeds (see Feed.size)
        self._sizes: dict[int, int] = {}  # each feed's size as counted in self.bytes
        self._refused: dict[int, None] = {}  # matches too long to follow (insertion order: oldest first)
        self._expired_at = time.monotonic()
        self._stop = threading.Event()
        self._inbox: deque[bytes] = deque(maxlen=INBOX)  # received, not applied yet (oldest dropped)
        self._arrived = threading.Event()
        self._applying = False  # the applying thread holds a message taken from the inbox
        self.sock: socket.socket | None = None
        self.udp_sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._bound: tuple[int, int, int] | None = None  # device, inode, ctime of the file it made
        self._closed = False

    def start(self) -> LiveHub:
        """Bind the channel (replacing a stale socket file), and the UDP endpoint when asked
        (writing its endpoint file, :func:`arena.live.remote.write_endpoint`), and start reading.
        ``OSError`` (EADDRINUSE) while another hub listens there: a second web process of the
        same database must not take the first one's live matches away."""
        if _listening(self.path):
            raise OSError(errno.EADDRINUSE, f"another process's live hub listens on {self.path}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * RECV_BYTES)
        sock.bind(str(self.path))
        sock.settimeout(0.5)
        self.sock = sock
        made = os.stat(self.path)
        self._bound = (made.st_dev, made.st_ino, made.st_ctime_ns)
        if self.udp is not None:
            try:
                self._bind_udp(*self.udp)
            except BaseException:
                self.close()
                raise
        readers: list[tuple[socket.socket, bytes | None]] = [(sock, None)]
        if self.udp_sock is not None and self.target is not None:
            readers.append((self.udp_sock, self.target.key))
        self._threads = [threading.Thread(target=self._apply_loop, name="arena-live-apply", daemon=True)]
        for s, key in readers:
            self._threads.append(
                threading.Thread(target=self._run, args=(s, key), name="arena-live-hub", daemon=True)
            )
        for t in self._threads:
            t.start()
        return self

    def _bind_udp(self, host: str, port: int) -> None:
        family, _, _, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
        udp = socket.socket(family, socket.SOCK_DGRAM)
        self.udp_sock = udp
        udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * RECV_BYTES)
        udp.bind(addr)
        udp.settimeout(0.5)
        bound = udp.getsockname()
        self.target = LiveTarget(str(bound[0]), int(bound[1]), secrets.token_bytes(32))
        write_endpoint(endpoint_path(self.path), self.target)

    def close(self, wait: bool = True) -> None:
        """Stop reading, close the sockets and remove the socket file -- only if it is still the
        one this hub made (a later hub of the same database may have replaced it).  Idempotent:
        the web app closes its hub at shutdown and again at exit.  ``wait=False`` (at exit) only
        stops the threads and removes the file, without waiting up to half a second for each
        reading thread to notice."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._arrived.set()
        if not wait:
            if self.target is not None:
                remove_endpoint(endpoint_path(self.path), self.target)
            self._unlink_own()
            return
        for t in self._threads:
            t.join(5.0)
        if self.udp_sock is not None:
            self.udp_sock.close()
        if self.target is not None:
            remove_endpoint(endpoint_path(self.path), self.target)
        if self.sock is not None:
            self.sock.close()
            if not _listening(self.path):  # ours, or stale: not a newer hub's
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)

    def _unlink_own(self) -> None:
        """Remove the socket file if it is the one this hub made (still open: at exit)."""
        with contextlib.suppress(FileNotFoundError):
            now = os.stat(self.path)
            if (now.st_dev, now.st_ino, now.st_ctime_ns) == self._bound:
                os.unlink(self.path)

    def _run(self, sock: socket.socket, key: bytes | None) -> None:
        """Read datagrams as fast as they come (the kernel queues only a few per socket) and
        hand them to the applying thread; with ``key`` (the UDP endpoint) only those signed
        with it, unsigned (their signature stripped)."""
        while not self._stop.is_set():
            try:
                data = sock.recv(RECV_BYTES)
            except TimeoutError:
                self._expire()
                continue
            except OSError:
                break
            if key is not None:
                payload = verify(key, data)
                if payload is None:  # not from one of this hub's workers: never applied
                    self.forged += 1
                    continue
                data = payload
            self._inbox.append(data)
            self._arrived.set()
        self._arrived.set()

    def _apply_loop(self) -> None:
        while not self._stop.is_set():
            self._arrived.wait(0.5)
            self._arrived.clear()
            while self._inbox:
                if time.monotonic() - self._expired_at >= EXPIRE_EVERY:
                    self._expire()
                self._applying = True
                data = self._inbox.popleft()
                try:
                    self.receive(json.loads(data))
                except Exception as exc:  # a bad message is dropped, never the hub
                    self.ignored += 1
                    log.debug("live: ignoring a message: %s", exc)
                finally:
                    self._applying = False

    def caught_up(self) -> bool:
        """True when every datagram read so far has been applied (nothing waits in the inbox)."""
        return not self._inbox and not self._applying

    def settle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds, blocking) until :meth:`caught_up`; whether it did.
        A watcher calls it when the match has ended, so that the last events already received
        reach it live rather than from the stored replay when the hub runs behind (a loaded host)."""
        deadline = time.monotonic() + timeout
        while not self.caught_up():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def receive(self, message: dict[str, Any]) -> None:
        """Apply one message (see :mod:`.publish` for its fields) and wake the match's watchers."""
        mid, k, ts = int(message["m"]), int(message["k"]), float(message.get("ts", time.time()))
        self.received += 1
        with self.lock:
            feed = self.feeds.get(mid)
            if mid in self._refused and k != 1:
                self.ignored += 1
                return
            if feed is not None and k == feed.count + 1:
                feed.add(str(message["l"]), ts)
                self.bytes += feed.size - self._sizes[mid]
            elif "f" in message and (feed is None or k > feed.count or k == 1):  # k 1: a new attempt
                inflate = zlib.decompressobj()
                text = inflate.decompress(base64.b64decode(message["f"]), MAX_FEED_BYTES).decode()
                if inflate.unconsumed_tail:
                    raise ValueError(f"match {mid}: a record over {MAX_FEED_BYTES} bytes")
                feed = self.feeds[mid] = Feed.from_record(mid, text, ts)
                self._refused.pop(mid, None)
                self.bytes += feed.size - self._sizes.get(mid, 0)
            else:  # out of step (joined mid-match, a lost datagram): wait for the next resync
                self.ignored += 1
                return
            self._sizes[mid] = feed.size
            if feed.size > MAX_FEED_BYTES:  # too long to follow: its watchers read the replay at the end
                self._drop(mid)
                self._refused[mid] = None
                while len(self._refused) > MAX_FEEDS:
                    del self._refused[next(iter(self._refused))]
            self._trim()
            watchers = list(self.watchers.get(mid, ()))
        for w in watchers:
            w.notify()

    def _drop(self, mid: int) -> None:
        del self.feeds[mid]
        self.bytes -= self._sizes.pop(mid)

    def _trim(self) -> None:
        """Under the lock: drop unwatched feeds, finished ones first then the least recently
        updated, until at most :data:`MAX_FEEDS` feeds and :data:`MAX_BYTES` remain."""
        if len(self.feeds) <= MAX_FEEDS and self.bytes <= MAX_BYTES:
            return
        order = sorted((f for f in self.feeds.values() if not self.watchers.get(f.match_id)),
                       key=lambda f: (not f.over, f.updated))  # fmt: skip
        for f in order:
            if len(self.feeds) <= MAX_FEEDS and self.bytes <= MAX_BYTES:
                break
            self._drop(f.match_id)

    def _expire(self) -> None:
        """Drop unwatched feeds :data:`FINISHED_GRACE` s after their game ended, or
        :data:`FEED_TTL` s after their last event."""
        now = time.monotonic()
        with self.lock:
            self._expired_at = now
            for mid, f in list(self.feeds.items()):
                idle = now - f.updated
                if (idle > FEED_TTL or (f.over and idle > FINISHED_GRACE)) and not self.watchers.get(mid):
                    self._drop(mid)

    def retained(self) -> tuple[int, int]:
        """(feeds kept, approximate bytes they hold) -- for tests and monitoring."""
        with self.lock:
            return len(self.feeds), self.bytes

    def feed(self, match_id: int) -> Feed | None:
        with self.lock:
            return self.feeds.get(match_id)

    def steps_since(self, match_id: int, k: int) -> tuple[Feed | None, list[Step]]:
        """The match's feed and its steps after ``k`` (built outside the lock: a feed only grows)."""
        with self.lock:
            feed = self.feeds.get(match_id)
            n = 0 if feed is None else feed.count
        return feed, ([] if feed is None else feed.since(k, n))

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
