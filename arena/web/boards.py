"""Leaderboards for the web that never make a request wait for a refit of 100,000 matches.

A leaderboard refits every rating system to every stored result (:func:`arena.leaderboard.
leaderboard`): milliseconds for a tournament, minutes for a ladder's 100,000 matches, and the
results change after every match.  :class:`LeaderboardCache` answers at once:

- with the leaderboard of the current results when it has it (cache key: the number and the
  highest id of the finished matches and the removed bots, :func:`arena.web.queries.results_key`);
- for a small result set (at most :data:`SYNC_LIMIT` finished matches) by computing it in the
  request, as before;
- otherwise with the last leaderboard it computed (*stale*: the page says so and how many
  matches it covers) or none yet (*computing*), while it is recomputed in the background (one
  computation per leaderboard at a time; a newer result set is picked up by the next request).

The background computation runs in a process of its own (:func:`compute_in_process`, one
spawned worker, the database opened read-only there): a refit is CPU-bound Python and, on a
thread of the web process, would hold the interpreter lock that every request needs.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from arena.leaderboard import LeaderRow
from arena.lifecycle import start_resource_tracker
from arena.store.db import Database

from . import queries

SYNC_LIMIT = 2000
"""Finished matches up to which a leaderboard is computed in the request itself."""

Key = tuple[int | None, str]
Stamp = tuple[int, int, tuple[int, ...]]
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


def compute_in_process(url: str, tournament_id: int | None, system: str) -> list[LeaderRow]:
    """The leaderboard, computed in a worker process over a read-only opening of ``url``."""
    from arena.leaderboard import leaderboard

    db = Database(url, readonly=True)
    try:
        return leaderboard(db, tournament_id=tournament_id, system=system)
    finally:
        db.close()


class LeaderboardCache:
    """Leaderboards by (tournament, system), recomputed in the background (module docstring).
    ``background`` computes one away from the request threads (default: in a spawned process,
    :func:`compute_in_process`); ``compute`` in the request, for small result sets."""

    def __init__(
        self,
        db: Database,
        compute: Compute,
        sync_limit: int = SYNC_LIMIT,
        background: Compute | None = None,
    ) -> None:
        self.db = db
        self.compute = compute
        self.background = background or self._in_process
        self.sync_limit = sync_limit
        self.values: dict[Key, tuple[Stamp, list[LeaderRow] | Exception]] = {}
        self.running: set[Key] = set()
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="arena-leaderboard")
        self._procs: ProcessPoolExecutor | None = None

    def _in_process(self, tournament_id: int | None, system: str) -> list[LeaderRow]:
        if self._procs is None:
            start_resource_tracker()  # before the pool's semaphores: a SIGHUP spares it
            self._procs = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        try:
            return self._procs.submit(compute_in_process, self.db.url, tournament_id, system).result()
        except BrokenProcessPool:
            self._procs = None
            raise

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

    def _compute(self, key: Key, at: Stamp, how: Compute | None = None) -> list[LeaderRow] | Exception:
        try:
            value: list[LeaderRow] | Exception = (how or self.compute)(*key)
        except Exception as exc:  # kept and shown (e.g. ratings that cannot be computed)
            value = exc
        with self.lock:
            old = self.values.get(key)
            if old is None or old[0][:2] <= at[:2]:  # not older results (the removals: any)
                self.values[key] = (at, value)
        return value

    def _background(self, key: Key, at: Stamp) -> None:
        try:
            self._compute(key, at, self.background)
        finally:
            with self.lock:
                self.running.discard(key)
