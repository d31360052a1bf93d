"""A brake on token guessing: failed authentications are limited per peer address.

Every stream that reaches the referee over TCP presents a token.  A missing or unknown token is a
*failure*, logged with the peer's address (never the token).  After ``failures`` of them from one
address within ``window`` seconds, that address is *locked out*: for ``lockout`` seconds every
stream from it is refused with ``RESOURCE_EXHAUSTED`` and a retry-after, before its token is even
looked at, so a correct token is refused too (otherwise the guessing would go on, with the
refusals telling right from wrong).  Each further lockout of the same address doubles, up to
``max_lockout``; an address that stays quiet for ``forget`` seconds after its last failure or
lockout starts afresh.  A success
does not wipe the failures (an attacker holding one valid token could otherwise reset its count).

Addresses are IPv4 addresses, or IPv6 /64 networks (one host usually owns a whole /64; loopback and
link-local addresses are kept whole).  Streams
over a Unix socket (the bots the arena launches itself) are never limited.  At most ``max_peers``
addresses are tracked; beyond that the ones idle longest (not locked out) are forgotten.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AuthLimits:
    """How many failed authentications one address may make, and what a lockout costs it."""

    failures: int = 10  # failures allowed within `window` seconds; the next one locks the address out
    window: float = 60.0
    lockout: float = 30.0  # the first lockout, in seconds; each further one doubles
    max_lockout: float = 3600.0
    forget: float = 3600.0  # seconds quiet (after the last failure or lockout) to start afresh
    max_peers: int = 65536

    def __post_init__(self) -> None:
        if self.failures < 1:
            raise ValueError("failures must be at least 1")
        if min(self.window, self.lockout, self.max_lockout, self.forget) <= 0:
            raise ValueError("window, lockout, max_lockout and forget must be positive")
        if self.max_peers < 1:
            raise ValueError("max_peers must be at least 1")


@dataclass
class _Peer:
    failures: deque[float] = field(default_factory=deque)  # times of the recent failures
    locked_until: float = 0.0
    strikes: int = 0  # lockouts so far (the next one lasts lockout * 2**strikes)
    last: float = 0.0  # time of the last failure or refusal
    refused: int = 0  # attempts refused during the current lockout


def peer_address(peer: str) -> str | None:
    """The address a gRPC peer string is limited under (``"ipv4:10.0.0.7:5123"`` -> ``10.0.0.7``,
    ``"ipv6:[2001:db8::7]:5123"`` -> ``2001:db8::/64``, an IPv4-mapped IPv6 address -> the IPv4
    address), or None for a peer that is not limited (a Unix socket, anything unrecognised)."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    rest = urllib.parse.unquote(rest)  # newer gRPC writes ipv6:%5B::1%5D:port
    if rest.startswith("["):
        host = rest[1 : rest.find("]")]
    else:
        host = rest.rsplit(":", 1)[0] if kind == "ipv4" else rest
    return address_group(host)


def address_group(host: str) -> str | None:
    """What an IP address ``host`` is counted under: an IPv4 address as it is (an IPv4-mapped
    IPv6 address as its IPv4 address), an IPv6 address as its /64 network (one host usually owns a
    whole /64), loopback and link-local kept whole; a zone index is dropped.  None for text that is
    not an IP address.  (The web server's connection count uses it too.)"""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # a zone index (fe80::1%eth0)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        if not (ip.is_loopback or ip.is_link_local):
            return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class AuthLimiter:
    """The failed-authentication record of one referee (see the module docstring).

    Not thread-safe: used from the referee's event loop only.  ``clock`` is for tests.
    """

    def __init__(
        self, limits: AuthLimits | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or AuthLimits()
        self.clock = clock
        self._peers: dict[str, _Peer] = {}
        self.lockouts = 0  # lockouts so far (all addresses)

    def locked_for(self, address: str) -> float | None:
        """Seconds ``address`` is still locked out for (the attempt is then refused and counted),
        or None when it may try a token."""
        peer = self._peers.get(address)
        now = self.clock()
        if peer is None or peer.locked_until <= now:
            if peer is not None and peer.refused:
                log.warning("lockout of %s ended; %d attempts were refused during it", address, peer.refused)
                peer.refused = 0
            return None
        peer.refused += 1
        peer.last = now
        wait = peer.locked_until - now
        if peer.refused == 1:
            log.warning(
                "refusing %s: locked out for another %.0f s after failed authentications", address, wait
            )
        else:
            log.debug("refusing %s (attempt %d during its lockout)", address, peer.refused)
        return wait

    def failure(self, address: str, why: str) -> float | None:
        """Record a failed authentication from ``address`` (``why``: what was wrong, never the
        token); returns the lockout in seconds when this failure started one, else None."""
        c = self.limits
        now = self.clock()
        peer = self._peers.get(address)
        if peer is None:
            self._make_room()
            peer = self._peers[address] = _Peer()
        elif now - max(peer.last, peer.locked_until) > c.forget:  # quiet since its last lockout ended
            peer.strikes = 0
        peer.last = now
        while peer.failures and now - peer.failures[0] > c.window:
            peer.failures.popleft()
        peer.failures.append(now)
        count = len(peer.failures)
        log.warning(
            "authentication failed from %s (%s): %d of %d failures allowed in %.0f s",
            address,
            why,
            count,
            c.failures,
            c.window,
        )
        if count < c.failures:
            return None
        lockout = min(c.max_lockout, c.lockout * float(2**peer.strikes))
        peer.strikes += 1
        peer.locked_until = now + lockout
        peer.failures.clear()  # a fresh window once the lockout is over
        peer.refused = 0
        self.lockouts += 1
        log.warning(
            "locking out %s for %.0f s after %d failed authentications in %.0f s (lockout %d)",
            address,
            lockout,
            count,
            c.window,
            peer.strikes,
        )
        return lockout

    def _make_room(self) -> None:
        """Forget the address idle longest (not locked out) when the table is full."""
        if len(self._peers) < self.limits.max_peers:
            return
        now = self.clock()
        idle = [(p.last, a) for a, p in self._peers.items() if p.locked_until <= now]
        victim = min(idle)[1] if idle else min((p.last, a) for a, p in self._peers.items())[1]
        del self._peers[victim]

    def tracked(self) -> int:
        """How many addresses are tracked."""
        return len(self._peers)


def retry_after(seconds: float) -> str:
    """Whole seconds to wait, as a ``retry-after`` metadata value (at least 1)."""
    return str(max(1, math.ceil(seconds)))
