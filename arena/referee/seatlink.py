"""The match's end of one seat: its inbox, flood policing, and the bookkeeping of a seat that
drops and comes back (reconnection within a grace, and the time it was away).

A transport feeds the link with :meth:`SeatLink.deliver` (one reader per stream, so a timeout in
the match never cancels the stream); the match only ever waits on :attr:`SeatLink.inbox`, with
the seat's deadline, on the referee's clock.  What the match sends goes out through the seat's
current :class:`~arena.referee.channel.SeatChannel` (held until one is attached).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from .answers import Received
from .channel import (
    Answer,
    Away,
    Closed,
    Event,
    Garbage,
    Hello,
    Inbound,
    Outgoing,
    Ready,
    Request,
    SeatChannel,
    Unexpected,
)
from .faults import Reason

INBOX_LIMIT = 64  # unread messages from one bot before it counts as flooding

Queued = Received | Closed | Garbage | Away  # what the match reads: messages stamped on arrival


@dataclass(eq=False)
class SeatLink:
    """The match's end of one seat's stream."""

    seat: int
    inbox: asyncio.Queue[Queued] = field(default_factory=asyncio.Queue)
    channel: SeatChannel | None = None  # the seat's current transport (None: not connected yet)
    early: list[Outgoing | None] = field(default_factory=list)  # sent before a channel (None: finish)
    attached: asyncio.Event = field(default_factory=asyncio.Event)
    closed: Closed | None = None
    pending: list[Event] = field(default_factory=list)  # events to send with the next request
    hello: str = ""
    last_message: str = ""
    grace: float = 0.0  # seconds the seat may take to reconnect after its stream drops
    away_since: float | None = None  # when the stream dropped (None while connected)
    reattached: asyncio.Event = field(default_factory=asyncio.Event)
    pending_request: Request | None = None  # sent and not yet answered
    pending_sent: float = 0.0  # when pending_request was sent (monotonic)
    latest_sent: int = 0  # id of the latest request sent to this seat (stamped on what arrives)
    ids_sent: set[int] = field(default_factory=set)  # every request id sent to this seat (match-wide ids)
    # seconds the stream was down since the current request was sent, in outages already over
    # (a running sum, not a list: a seat that drops and comes back thousands of times costs nothing)
    away_done: float = 0.0
    away_detail: str = ""  # why the stream last dropped
    away_queued: bool = False  # an Away is in the inbox, not read yet (one stands for any number)
    away_spent: float = 0.0  # seconds of time away already not charged, in decisions of this match
    setup: bool = False  # the stream promised a Ready after the Welcome (metadata arena-setup)
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set by a Ready or a closed stream
    # set by the first thing the stream delivers (a Hello, or an answer from a bot that sends none)
    greeted: asyncio.Event = field(default_factory=asyncio.Event)
    readies: int = 0  # Ready messages since the last request was sent (a flood is counted per decision)
    ignored: int = 0  # messages that answered nothing during the current request

    # ------------------------------------------------------------------ from the seat

    def deliver(self, item: Inbound) -> None:
        """Called by the transport for every item; flags closure and flooding.  A Ready sets
        :attr:`ready` and never reaches the inbox (sent late or again it is ignored).  A
        ``disconnected`` :class:`Closed` of a seat with a grace makes it :class:`Away` instead."""
        self.greeted.set()  # the stream owes no Hello any more: said, skipped (Hello is optional) or gone
        if self.closed is not None:
            return
        if isinstance(item, Away):
            item = Closed(Reason.DISCONNECTED, item.detail)
        if isinstance(item, Ready):
            self.readies += 1
            if self.readies <= INBOX_LIMIT:
                self.ready.set()
                return
            item = Closed(Reason.MALFORMED_ACTION, f"flooded the stream: over {INBOX_LIMIT} ready messages")
        if isinstance(item, Closed) and self.grace > 0 and item.reason == Reason.DISCONNECTED:
            if self.away_since is None:  # it may come back: not closed, only away
                self.away_since = time.monotonic()
                self.away_detail = item.detail
                self.reattached.clear()
                if not self.away_queued:  # the match reads the seat's state then, not the item's
                    self.away_queued = True
                    self.inbox.put_nowait(Away(item.detail))
            return
        if isinstance(item, Closed):
            self.ready.set()  # nothing to wait for
            self.closed = item
        elif self.inbox.qsize() >= INBOX_LIMIT:
            self.ready.set()
            item = Closed(Reason.MALFORMED_ACTION, f"flooded the stream: over {INBOX_LIMIT} unread messages")
            self.closed = item
        elif isinstance(item, Answer | Hello | Unexpected):
            # judged later against the requests sent by now, not by the time the match reads it
            sent = not isinstance(item, Answer) or item.request_id in self.ids_sent
            self.inbox.put_nowait(Received(item, self.latest_sent, sent))
            return
        self.inbox.put_nowait(item)

    # ------------------------------------------------------------------ to the seat

    def owes(self) -> list[asyncio.Event]:
        """What the seat's stream may still owe after a Welcome, as events that are set once it
        has arrived (or the stream has ended): its Hello while it has sent nothing yet, and with
        :attr:`setup` its Ready."""
        owed = [self.greeted] if not self.greeted.is_set() else []
        if self.setup and not self.ready.is_set():
            owed.append(self.ready)
        return owed

    def connect(self, channel: SeatChannel) -> None:
        """Make ``channel`` the seat's transport; what was sent before it goes out first."""
        self.channel = channel
        early, self.early = self.early, []
        for message in early:
            if message is None:
                channel.finish()
            else:
                channel.send(message)

    def send(self, message: Outgoing) -> None:
        """Send a message to the seat (held until a channel is attached)."""
        if self.channel is None:
            self.early.append(message)
        else:
            self.channel.send(message)

    def finish(self) -> None:
        """End the seat's stream (once what is queued is out)."""
        if self.channel is None:
            self.early.append(None)
        else:
            self.channel.finish()

    def request_sent(self, request: Request) -> None:
        """Record that ``request`` goes out now, and send it."""
        self.pending_request = request
        self.pending_sent = time.monotonic()
        self.latest_sent = request.request_id
        self.ids_sent.add(request.request_id)
        self.away_done = 0.0  # older outages cannot overlap this request
        self.ignored = 0
        self.readies = 0  # a Ready sent again is ignored: only a flood within one decision counts
        self.send(request)

    # ------------------------------------------------------------------ reconnection

    def came_back(self, channel: SeatChannel) -> None:
        """The dropped stream of this seat is back on ``channel``: close the current outage."""
        old = self.channel
        self.channel = channel
        if old is not None and old is not channel:
            old.finish()  # whatever was still queued on the dropped stream is sent again
        if self.away_since is not None:
            self.away_done += max(0.0, time.monotonic() - max(self.away_since, self.pending_sent))
        self.away_since = None
        self.reattached.set()

    def can_come_back(self) -> bool:
        """True while the seat's stream is down and it may still reconnect."""
        return self.away_since is not None

    def took_away(self) -> None:
        """The match has read the :class:`Away` in the inbox: a later drop queues another."""
        self.away_queued = False

    def away_between(self, start: float, end: float) -> float:
        """Seconds within [``start``, ``end``] (monotonic) during which the seat's stream was
        down; ``start`` is when the current request was sent (outages before it are forgotten)."""
        away = self.away_done
        if self.away_since is not None:
            away += max(0.0, end - max(self.away_since, start))
        return away

    def free_away(self, start: float, end: float) -> float:
        """Seconds within [``start``, ``end``] the seat was away that are not charged: time
        away during decisions is free up to :attr:`grace` seconds in all per match (what a
        network failure may fairly cost); beyond that it is think time (a bot that drops and
        comes back on purpose gains at most that much)."""
        return min(self.away_between(start, end), max(0.0, self.grace - self.away_spent))

    def spend_away(self, sent: float) -> float:
        """The decision asked at ``sent`` is over: its free time away is used up; returned."""
        free = self.free_away(sent, time.monotonic())
        self.away_spent += free
        return free

    def think(self, sent: float) -> float:
        """Seconds the seat has been thinking since ``sent``: time its stream was down is not
        think time, up to the match's allowance (:meth:`free_away`)."""
        now = time.monotonic()
        return max(0.0, now - sent - self.free_away(sent, now))
