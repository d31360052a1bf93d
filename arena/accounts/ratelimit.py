"""In-memory token-bucket rate limits, per key (a user or an address).

One process keeps the buckets, so they hold for one server (``arena serve``); several servers
behind a load balancer would each count on their own.  Buckets of idle keys are dropped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_KEYS = 100_000


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    """``capacity`` actions at once, refilled at ``per_second``; thread-safe."""

    def __init__(
        self, capacity: float, per_second: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if capacity < 1 or per_second <= 0:
            raise ValueError("a rate limit needs a capacity of at least 1 and a positive refill rate")
        self.capacity = capacity
        self.per_second = per_second
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def _bucket(self, key: str) -> _Bucket:
        now = self.clock()
        b = self._buckets.get(key)
        if b is None:
            if len(self._buckets) >= MAX_KEYS:
                self._sweep(now)
            b = self._buckets[key] = _Bucket(self.capacity, now)
        else:
            b.tokens = min(self.capacity, b.tokens + (now - b.stamp) * self.per_second)
            b.stamp = now
        return b

    def _sweep(self, now: float) -> None:
        full = self.capacity / self.per_second
        for key in [k for k, b in self._buckets.items() if now - b.stamp >= full]:
            del self._buckets[key]

    def blocked(self, key: str) -> float:
        """Seconds until ``key`` may act again (0.0: it may now); takes nothing."""
        with self._lock:
            b = self._bucket(key)
            return 0.0 if b.tokens >= 1 else (1 - b.tokens) / self.per_second

    def hit(self, key: str) -> float:
        """Take one token for ``key``: 0.0 when there was one, else the seconds to wait (nothing
        taken)."""
        with self._lock:
            b = self._bucket(key)
            if b.tokens >= 1:
                b.tokens -= 1
                return 0.0
            return (1 - b.tokens) / self.per_second

    def give_back(self, key: str) -> None:
        """Return a token :meth:`hit` took for ``key`` (never above the capacity)."""
        with self._lock:
            b = self._bucket(key)
            b.tokens = min(self.capacity, b.tokens + 1)


def take_all(pairs: list[tuple[RateLimiter, str]]) -> float:
    """Take one token from every (limiter, key) of ``pairs``, or none: 0.0 when all were taken,
    else the longest wait of those that had none (the ones taken are given back).  Each take is
    atomic, so concurrent callers can never together pass more than a bucket holds (checking
    first and counting afterwards let a burst of simultaneous requests all pass)."""
    taken: list[tuple[RateLimiter, str]] = []
    wait = 0.0
    for limiter, key in pairs:
        w = limiter.hit(key)
        if w > 0:
            wait = max(wait, w)
        else:
            taken.append((limiter, key))
    if wait > 0:
        for limiter, key in taken:
            limiter.give_back(key)
    return wait


class LoginAttempt:
    """The tokens one sign-in (or sign-up) attempt holds (:meth:`Limits.begin_login`): taken
    before the password is checked, given back by :meth:`forgive` when the attempt is not to be
    counted (a sign-in that succeeded, a sign-up refused for a bad name)."""

    def __init__(self, held: list[tuple[RateLimiter, str]]) -> None:
        self._held = held

    def forgive(self) -> None:
        """Do not count this attempt after all."""
        for limiter, key in self._held:
            limiter.give_back(key)
        self._held = []


class RateLimited(Exception):
    """Too many requests: retry after ``retry_after`` seconds."""

    def __init__(self, what: str, retry_after: float) -> None:
        self.retry_after = max(1, int(retry_after + 0.999))
        super().__init__(f"too many {what}: try again in {self.retry_after} s")


@dataclass
class Limits:
    """The server's limits: uploads per user and per address; failed sign-ins per (user, address)
    pair, per address, and a ceiling per user over all addresses.

    The pair is what one client trying one account meets: one address cannot lock a user out for
    everybody else.  The per-user ceiling still bounds guessing spread over many addresses; its
    price is that an attacker with several addresses can keep a known user waiting (README)."""

    uploads_per_user: RateLimiter
    uploads_per_address: RateLimiter
    failed_logins_per_user: RateLimiter  # the ceiling per user, over every address
    failed_logins_per_address: RateLimiter
    failed_logins_per_user_address: RateLimiter = field(default_factory=lambda: RateLimiter(5, 1 / 60))

    @classmethod
    def default(cls) -> Limits:
        """10 uploads at once then 1 per minute (per user; 30 then 1 per 20 s per address); failed
        sign-ins: 5 then 1 per minute per (user, address), 20 then 1 per 15 s per address, and
        100 then 1 per 30 s per user over all addresses."""
        return cls(
            RateLimiter(10, 1 / 60),
            RateLimiter(30, 1 / 20),
            RateLimiter(100, 1 / 30),
            RateLimiter(20, 1 / 15),
            RateLimiter(5, 1 / 60),
        )

    def upload(self, user: str, address: str) -> None:
        """Count an upload; :class:`RateLimited` (nothing counted) when the user or the address is
        over its limit."""
        wait = take_all([(self.uploads_per_user, user), (self.uploads_per_address, address)])
        if wait > 0:
            raise RateLimited("uploads", wait)

    def upload_wait(self, user: str, address: str) -> float:
        """Seconds until the user and the address may upload again (0.0: now); counts nothing
        (an upload over the limit is refused before its body is read, then counted by
        :meth:`upload` as before)."""
        return max(self.uploads_per_user.blocked(user), self.uploads_per_address.blocked(address))

    def begin_login(self, user: str, address: str) -> LoginAttempt:
        """Before a sign-in's password is checked: count it as failed in advance (the user, the
        address and the pair), or :class:`RateLimited` when one of them failed too often.  A
        sign-in that succeeds is then forgiven (:meth:`LoginAttempt.forgive`).  Counting first is
        what bounds simultaneous guesses: each takes its token before the slow password check."""
        pairs = [
            (self.failed_logins_per_user, user),
            (self.failed_logins_per_address, address),
            (self.failed_logins_per_user_address, _pair(user, address)),
        ]
        wait = take_all(pairs)
        if wait > 0:
            raise RateLimited("failed sign-ins", wait)
        return LoginAttempt(pairs)


def _pair(user: str, address: str) -> str:
    return f"{user}\n{address}"  # a newline is in neither a username nor an address
