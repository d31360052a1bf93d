"""The web server's guard on connections: each request must arrive in time, and one address may
hold only so many connections at once.

uvicorn by itself waits for ever for a request head that never completes, and accepts as many
connections as the process has files: an outside review held 4,000 half-sent requests open for a
minute, and at a limit of 1,024 open files 1,100 of them left the server unable to accept anyone
(``accept() ... Too many open files``).  :func:`guarded_protocol` makes uvicorn's HTTP/1.1
protocol class with two limits:

* **time**: a request's head must be complete within ``head_timeout`` seconds of the connection
  (or of the previous response), and its body within ``body_timeout`` seconds of the head;
  otherwise the connection is closed (the app sees a disconnect).  A response that takes long
  (the live event streams) is not limited: the request has arrived;
* **number**: one address (the peer's IP; for IPv6 its /64) may hold ``per_address`` connections
  at once; one more is answered ``503`` with ``Retry-After`` and closed before anything is read
  (and logged at most once a minute per address).  ``arena play`` serves one game to the person
  on this machine and counts no addresses: every local user shares 127.0.0.1, and another user's
  connections must not lock the person out of their own game.  Behind a reverse
  proxy (``arena serve --forwarded-allow-ips``) every client has the proxy's address: the limit
  is then :data:`PROXIED` unless ``ARENA_WEB_CONNECTIONS_PER_ADDRESS`` says otherwise, and the
  proxy should limit its clients.

Each server gets its own class (its own count), so servers in one process never share a count.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter
from typing import Any, ClassVar, Final

import h11
from starlette.requests import HTTPConnection
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.referee.authlimit import address_group
from arena.safetext import small_int

log = logging.getLogger(__name__)

HEAD_TIMEOUT: Final = 10.0
BODY_TIMEOUT: Final = 120.0  # an upload of a few MB on a slow line
PER_ADDRESS: Final = 64
PROXIED: Final = 100_000  # behind a trusted proxy: the proxy's clients share its address
PER_ADDRESS_ENV: Final = "ARENA_WEB_CONNECTIONS_PER_ADDRESS"


def per_address_limit(*, behind_proxy: bool = False) -> int:
    """The connections one address may hold: ``$ARENA_WEB_CONNECTIONS_PER_ADDRESS``, else
    :data:`PER_ADDRESS` (:data:`PROXIED` ``behind_proxy``: every client comes from the proxy's
    address, and the proxy limits them); ``ValueError`` saying what is wrong for a value that is
    not a number >= 1."""
    raw = os.environ.get(PER_ADDRESS_ENV, "").strip()
    if not raw:
        return PROXIED if behind_proxy else PER_ADDRESS
    number = small_int(raw)
    if number is None or number < 1:
        raise ValueError(f"{PER_ADDRESS_ENV} must be a whole number of at least 1, got {raw!r}")
    return number


LOG_EVERY: Final = 60.0  # seconds between two log lines about one address's refused connections


def counted_address(host: str) -> str:
    """What the per-address count counts ``host`` under: as the lobby's lockout counts addresses
    (:func:`arena.referee.authlimit.address_group`: an IPv6 address as its /64, else one address
    would hold millions of shares); text that is not an IP address as it is."""
    return address_group(host) or host


def client_address(request: HTTPConnection) -> str:
    """What the app's per-address limits (sign-ins, sign-ups, uploads, web games, analyses) count
    a request under: its peer's address as the connection count counts it
    (:func:`counted_address`); ``"unknown"`` without one.  An IPv6 address counts as its /64: one
    host usually owns a whole /64, and counted whole each of its addresses had limits of its own."""
    return counted_address(request.client.host) if request.client is not None else "unknown"


class _Guarded(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the guard's limits (module docstring)."""

    head_timeout: ClassVar[float] = HEAD_TIMEOUT
    body_timeout: ClassVar[float] = BODY_TIMEOUT
    per_address: ClassVar[int] = PER_ADDRESS
    open_by_address: ClassVar[Counter[str]]
    told: ClassVar[dict[str, float]]  # when a refusal for an address was last logged

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None
        self._phase: str | None = None  # "head" or "body" while a request is being read
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = counted_address(self.client[0] if self.client else "unknown")
        self._address = address
        self.open_by_address[address] += 1
        if self.open_by_address[address] > self.per_address:
            now = time.monotonic()
            if now - self.told.get(address, -LOG_EVERY) >= LOG_EVERY:  # a flood is not a log flood
                self.told[address] = now
                if len(self.told) > 10_000:
                    self.told.clear()
                log.warning(
                    "refused connections from %s: it holds %d already (said at most once a minute)",
                    address,
                    self.per_address,
                )
            text = (
                f"this address holds {self.per_address} connections to the arena already, the most at "
                "once: close some (or wait a minute) and try again\n"
            ).encode()
            transport.write(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                b"Retry-After: 60\r\nConnection: close\r\nContent-Length: "
                + str(len(text)).encode()
                + b"\r\n\r\n"
                + text
            )
            transport.close()
            return
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self._address is not None:
            self.open_by_address[self._address] -= 1
            if self.open_by_address[self._address] <= 0:
                del self.open_by_address[self._address]
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    # ------------------------------------------------------------------ the deadline

    def _watch(self) -> None:
        """Arm, move or drop the deadline for the part of the request being read now."""
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        phase = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if phase == self._phase:
            return
        self._cancel()
        self._phase = phase
        if phase is not None:
            seconds = self.head_timeout if phase == "head" else self.body_timeout
            self._deadline = self.loop.call_later(seconds, self._expire)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self._phase is not None and not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(
    *,
    head_timeout: float = HEAD_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    per_address: int | None = None,
    behind_proxy: bool = False,
) -> type[H11Protocol]:
    """A protocol class for one uvicorn server (``uvicorn.Config(http=...)``) with these limits
    and a count of its own; ``per_address`` None: :func:`per_address_limit`."""
    limit = per_address_limit(behind_proxy=behind_proxy) if per_address is None else per_address
    return type(
        "GuardedH11Protocol",
        (_Guarded,),
        {
            "head_timeout": head_timeout,
            "body_timeout": body_timeout,
            "per_address": limit,
            "open_by_address": Counter(),
            "told": {},
        },
    )
