"""Results a coordinator absorbs per second: one transaction per result vs batched, same run.

Usage: .venv/bin/python benchmarks/results.py [--quick] [--matches N] [--database-url URL]

Real 4-player greedy matches are played once in memory (a real referee Match, greedy answers:
real replays); then the coordinator loop (:func:`arena.tournament.runner.coordinate`) is fed
those results by an executor that plays instantly (the coordinator's view of a cluster far
faster than it), on a fresh tournament each time:

(a) one at a time: one match in flight, so one ``mark_running`` and one result transaction per
    match (what the coordinator did before batching; before, it also compressed each replay
    itself, now the worker does);
(b) batched: 64 in flight, every result a wait returns written in one transaction (and the
    matches handed out together marked running in one).

Both on SQLite (a file) and, with ``--database-url`` or ``ARENA_TEST_POSTGRES_URL`` set, on a new
PostgreSQL database (created and dropped).  Prints results/s for each and the ratio (b)/(a).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def real_results(count: int) -> list[Any]:
    """``count`` finished 4-player greedy matches, played in memory by a real referee Match, as a
    worker returns them (replay packed for storage by the worker: ``pack_replay``)."""
    from arena.referee.fakechannel import FakeTable, greedy
    from arena.store.tournaments import pack_replay

    async def play() -> list[Any]:
        return [await FakeTable(4, seed=seed).play([greedy] * 4) for seed in range(count)]

    return [pack_replay(r) for r in asyncio.run(play())]


class InstantExecutor:
    """Hands back a precomputed result for every match at once; ``inflight`` matches at a time."""

    def __init__(self, results: list[Any], inflight: int) -> None:
        self.results = results
        self.inflight = inflight
        self.pending: dict[Hashable, object] = {}
        self.n = 0

    def slots(self) -> int:
        return self.inflight

    def submit(self, task: object) -> Hashable:
        self.n += 1
        self.pending[self.n] = task
        return self.n

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Any]]:
        out = []
        for h in handles:
            self.pending.pop(h)
            out.append((h, self.results[int(str(h)) % len(self.results)]))
        return out

    def restart(self) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def database(url: str | None) -> Iterator[Any]:
    """A fresh database: SQLite in a temporary ARENA_HOME, or a new PostgreSQL database."""
    from sqlalchemy.engine import make_url

    from arena.store.db import Database

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as home:
        os.environ["ARENA_HOME"] = home
        os.environ.pop("ARENA_DATABASE_URL", None)
        if url is None:
            db = Database()
            try:
                yield db
            finally:
                db.close()
            return
        import psycopg

        admin = make_url(url)
        name = f"arena_bench_{secrets.token_hex(4)}"
        plain = admin.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        db = Database(admin.set(database=name).render_as_string(hide_password=False))
        try:
            yield db
        finally:
            db.close()
            with psycopg.connect(plain, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def absorb(results: list[Any], matches: int, url: str | None, inflight: int) -> tuple[int, float]:
    """Run ``matches`` instant matches through the coordinator loop; (recorded, seconds of the
    loop: the run's start, reading the queued schedule, is not counted)."""
    from arena.store.bots import add_bot
    from arena.store.tournaments import status_counts
    from arena.tournament import runner
    from arena.tournament.service import create

    with database(url) as db:
        names = [f"greedy{k}" for k in range(4)]
        for name in names:
            add_bot(db, name, ROOT / "bots" / "greedy_bot.py")
        t = create(db, names, table_sizes=(4,), games=max(1, matches // 4), seed=99, move_time=5, bank=30)
        assert t.id is not None
        tasks = runner.open_run(db, t.id)  # the run's start (reading the schedule), not per result
        start = time.perf_counter()
        runner.coordinate(db, t.id, tasks, InstantExecutor(results, inflight))
        elapsed = time.perf_counter() - start
        done = status_counts(db, t.id).get("finished", 0)
    return done, elapsed


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 matches per measurement")
    parser.add_argument("--matches", type=int, default=2000, help="matches per measurement")
    parser.add_argument("--database-url", default=os.environ.get("ARENA_TEST_POSTGRES_URL"),
                        help="a PostgreSQL server (a role that may CREATE DATABASE); default "
                        "$ARENA_TEST_POSTGRES_URL; 'none' for SQLite only")  # fmt: skip
    args = parser.parse_args()
    matches = 200 if args.quick else args.matches
    print(f"uptime: {uptime()}")
    results = real_results(16)
    size = sum(len(r.replay) for r in results) / len(results) / 1024
    print(f"{len(results)} real 4-player greedy results (replay {size:.1f} KiB), {matches} matches per run")
    backends: list[tuple[str, str | None]] = [("SQLite", None)]
    if args.database_url and args.database_url != "none":
        backends.append(("PostgreSQL", args.database_url))
    for label, url in backends:
        rates = {}
        for mode, inflight in (("one at a time", 1), ("batched", 64)):
            done, elapsed = absorb(results, matches, url, inflight)
            rates[mode] = done / elapsed
            rate = f"{done / elapsed:6.0f} results/s ({elapsed / done * 1000:.2f} ms each)"
            print(f"{label:10s} {mode:14s}: {done} results in {elapsed:6.2f}s = {rate}", flush=True)
        print(f"{label:10s} ratio batched / one at a time: {rates['batched'] / rates['one at a time']:.2f}x")
    print(f"uptime: {uptime()}")


if __name__ == "__main__":
    sys.exit(main())
