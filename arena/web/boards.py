"""Leaderboards for the web that never make a request wait for a refit of 100,000 matches.

A leaderboard refits every rating system to every stored result (:func:`arena.leaderboard.
leaderboard`): milliseconds for a tournament, minutes for a ladder's 100,000 matches, and the
results change after every match.  :class:`LeaderboardCache` answers at once:

- with the leaderboard of the current results when it has it (cache key: the number and the
  highest id of the finished matches, :func:`arena.web.queries.results_key`);
- for a small result set (at most :data:`SYNC_LIMIT` finished matches) by computing it in the
  request, as before;
- otherwise with the last leaderboard it computed (*stale*: the page says so and how many
  matches it covers) or none yet (*computing*), while one background thread recomputes it (one
  computation per leaderboard at a time; a newer result set is picked up by the next request).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from arena.leaderboard import LeaderRow
from arena.store.db import Database

from . import queries

SYNC_LIMIT = 2000
"""Finished matches up to which a leaderboard is computed in the request itself."""

Key = tuple[int | None, str]
Compute = Callable[[int | None, str], list[LeaderRow]]


@dataclass(frozen=True)
class Answer:
    """A leaderboard as the cache has it: its rows (empty while computing), whether they are
    those of the current results, and how many finished matches they cover."""

    rows: list[LeaderRow]
    fresh: bool
    computing: bool
    matches: int
    error: Exception | None = None

    @property
    def note(self) -> str | None:
        """What a page says about it (None: current)."""
        if self.computing and not self.rows and not self.fresh:
            return "The ratings are being computed from every stored result; this page reloads by itself."
        if not self.fresh:
            return f"Ratings as of {self.matches:,} matches; newer results are being included."
        return None


class LeaderboardCache:
    """Leaderboards by (tournament, system), recomputed in the background (module docstring)."""

    def __init__(self, db: Database, compute: Compute, sync_limit: int = SYNC_LIMIT) -> None:
        self.db = db
        self.compute = compute
        self.sync_limit = sync_limit
        self.values: dict[Key, tuple[tuple[int, int], list[LeaderRow] | Exception]] = {}
        self.running: set[Key] = set()
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="arena-leaderboard")

    def get(self, tournament_id: int | None, system: str) -> Answer:
        """The leaderboard now (never waits for a big refit)."""
        key: Key = (tournament_id, system)
        current = queries.results_key(self.db, tournament_id)
        with self.lock:
            have = self.values.get(key)
            busy = key in self.running
        if have is not None and have[0] == current:
            return self._answer(have[1], True, False, current[0])
        if current[0] <= self.sync_limit:
            value = self._compute(key, current)
            return self._answer(value, True, False, current[0])
        if not busy:
            with self.lock:
                self.running.add(key)
            self.pool.submit(self._background, key, current)
        if have is None:
            return Answer([], False, True, 0)
        return self._answer(have[1], False, True, have[0][0])

    def _answer(self, value: list[LeaderRow] | Exception, fresh: bool, computing: bool, n: int) -> Answer:
        if isinstance(value, Exception):
            return Answer([], fresh, computing, n, value)
        return Answer(value, fresh, computing, n)

    def _compute(self, key: Key, at: tuple[int, int]) -> list[LeaderRow] | Exception:
        try:
            value: list[LeaderRow] | Exception = self.compute(*key)
        except Exception as exc:  # kept and shown (e.g. ratings that cannot be computed)
            value = exc
        with self.lock:
            old = self.values.get(key)
            if old is None or old[0] <= at:
                self.values[key] = (at, value)
        return value

    def _background(self, key: Key, at: tuple[int, int]) -> None:
        try:
            self._compute(key, at)
        finally:
            with self.lock:
                self.running.discard(key)
