"""Cluster throughput, to size a Dask cluster: what workers deliver, what one coordinator absorbs.

Usage: .venv/bin/python benchmarks/cluster.py [--quick] [--games N] [--absorb N] [--database-url URL]

(a) matches per second of a 4-bot round robin at 4-player tables (greedy bots kept running
    across matches, unsandboxed as in benchmarks/tournament.py) on a local Dask cluster of 1 and
    of 2 worker processes (one match at a time each; pinned to a core each, the default, and
    unpinned), and the same on the local runner (--jobs 2) for comparison.  "steady" excludes
    the start of the workers and bots (first to last result).
    Each run also prints the CPU seconds per match of everything it started (workers, bots:
    counted once reaped) and of this process (coordinator and scheduler), and the cores busy
    (CPU / wall): one worker plays one match at a time, a ping-pong between the referee and one
    bot, so it keeps about one core busy and gets the other core's spare time for the scheduler,
    the coordinator and gRPC's threads for free; two idle cores bound the speed-up of 2 workers
    by about 2 / (cores busy with 1 worker), printed as "bound".
(b) the coordinator's own cost per match: the same loop fed precomputed results of real
    matches (real replays) by an executor that plays instantly (8 in flight); split into
    mark_running, record_results (one transaction per batch: status, seats, the replay its
    worker compressed: the results are packed as a worker packs them) and the rest.
(c) Dask's own cost per task: trivial tasks through the scheduler, submitted as the
    coordinator submits matches (a few in flight per worker thread).
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctree import TreeCpu  # benchmarks/, beside this script

ROOT = Path(__file__).resolve().parent.parent


def _noop(x: int) -> int:
    return x


@contextmanager
def fresh_home() -> Iterator[str]:
    """A fresh ARENA_HOME (and SQLite database in it) for one measurement."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as home:
        old = os.environ.get("ARENA_HOME")
        os.environ["ARENA_HOME"] = home
        try:
            yield home
        finally:
            if old is None:
                os.environ.pop("ARENA_HOME", None)
            else:
                os.environ["ARENA_HOME"] = old


def make_tournament(db: Any, games: int) -> int:
    from arena.store.bots import add_bot
    from arena.tournament.service import create

    names = [f"greedy{k}" for k in range(4)]
    for name in names:
        add_bot(db, name, ROOT / "bots" / "greedy_bot.py")
    t = create(db, names, table_sizes=(4,), games=games, seed=99, move_time=5, bank=30)
    assert t.id is not None
    return t.id


def run_matches(
    where: str, games: int, results: list[Any]
) -> tuple[int, float, float, float, dict[str, dict[str, float]]]:
    """Run the tournament on ``where`` ("cluster:N" or "local:N", ":unpinned" for no pinning);
    matches, total and steady seconds, the CPU seconds of everything while it ran (this process,
    the workers and bots it started: sampled from /proc, :mod:`proctree`), and those seconds by
    kind of process and thread."""
    from arena.store.db import Database
    from arena.tournament.cluster import local_cluster, run_tournament_on_cluster
    from arena.tournament.runner import Progress, run_tournament
    from arena.tournament.task import pack_replay

    kind, n, *rest = where.split(":")
    pin = False if rest == ["unpinned"] else None
    with fresh_home():
        db = Database()
        tid = make_tournament(db, games)
        stamps: list[float] = []

        def progress(p: Progress) -> None:
            stamps.append(time.perf_counter())
            if p.last is not None:
                results.append(pack_replay(p.last))

        if kind == "cluster":
            with local_cluster(int(n), pin) as client:
                client.wait_for_workers(int(n))
                tree = TreeCpu(interval=0.2)
                start = time.perf_counter()  # cluster up; workers start bots on their first match
                run_tournament_on_cluster(db, tid, client, progress=progress)
                total = time.perf_counter() - start
                kinds = tree.stop_threads()
        else:
            tree = TreeCpu(interval=0.2)
            start = time.perf_counter()
            run_tournament(db, tid, jobs=int(n), progress=progress, pin=pin)
            total = time.perf_counter() - start
            kinds = tree.stop_threads()
        db.close()
    used = sum(sum(v.values()) for v in kinds.values())
    return len(stamps), total, stamps[-1] - stamps[0], used, kinds


class InstantExecutor:
    """Returns a precomputed result at once for every match (the coordinator's view of an
    infinitely fast cluster); times nothing itself."""

    def __init__(self, results: list[Any]) -> None:
        self.results = results
        self.pending: dict[Hashable, object] = {}
        self.n = 0
        self.k = 0

    def slots(self) -> int:
        return 8

    def submit(self, task: object) -> Hashable:
        self.n += 1
        self.pending[self.n] = task
        return self.n

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Any]]:
        out = []
        for h in handles:
            self.pending.pop(h)
            self.k += 1
            out.append((h, self.results[self.k % len(self.results)]))
        return out

    def restart(self) -> None:
        pass

    def close(self) -> None:
        pass


def coordinator_cost(results: list[Any], games: int, url: str | None) -> dict[str, float]:
    """Feed precomputed results through the coordinator loop; seconds per match, by part."""
    from arena.store import tournaments
    from arena.store.db import Database
    from arena.tournament import runner

    timings: dict[str, list[float]] = {"mark_running": [], "record_result": []}

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                timings[name].append(time.perf_counter() - t0)

        return wrapper

    with fresh_home():
        db = Database(url) if url else Database()
        tid = make_tournament(db, games)
        saved = runner.mark_running, runner.record_results
        runner.mark_running = timed("mark_running", tournaments.mark_running)
        runner.record_results = timed("record_result", tournaments.record_results)
        try:
            start = time.perf_counter()
            tasks = runner.open_run(db, tid)
            runner.coordinate(db, tid, tasks, InstantExecutor(results))
            total = time.perf_counter() - start
        finally:
            runner.mark_running, runner.record_results = saved
        n = tournaments.status_counts(db, tid).get("finished", 0)
        db.close()
    mark = sum(timings["mark_running"]) / n
    rec = sum(timings["record_result"]) / n
    return {"matches": n, "total": total / n, "mark_running": mark, "record_result": rec}


def scheduler_cost(tasks: int, workers: int) -> tuple[float, float, float]:
    """Trivial tasks through a local cluster of ``workers``: seconds per task when all are
    submitted at once, seconds per task and p50 round trip with ``2 x workers`` in flight (as
    the coordinator submits matches)."""
    from arena.tournament.cluster import local_cluster

    with local_cluster(workers) as client:
        client.wait_for_workers(workers)
        client.gather(client.map(_noop, range(100), pure=False))  # warm up
        start = time.perf_counter()
        client.gather(client.map(_noop, range(tasks), pure=False))
        batch = (time.perf_counter() - start) / tasks
        trips = []
        inflight = []
        start = time.perf_counter()
        for i in range(tasks):
            inflight.append((time.perf_counter(), client.submit(_noop, i, pure=False)))
            if len(inflight) >= 2 * workers:
                t, f = inflight.pop(0)
                f.result()
                trips.append(time.perf_counter() - t)
        for t, f in inflight:
            f.result()
            trips.append(time.perf_counter() - t)
        paced = (time.perf_counter() - start) / tasks
    return batch, paced, statistics.median(trips)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="seeds (each played in 4 rotations)")
    parser.add_argument("--absorb", type=int, default=100, help="seeds for the coordinator measurement")
    parser.add_argument("--tasks", type=int, default=1000, help="trivial tasks for the scheduler measurement")
    parser.add_argument("--database-url", help="coordinator measurement on this (empty) database")
    parser.add_argument("--only-dask", action="store_true", help="run (c) only")
    parser.add_argument("--quick", action="store_true", help="--games 3 --absorb 10 --tasks 200")
    args = parser.parse_args()
    if args.quick:
        args.games, args.absorb, args.tasks = 3, 10, 200
    print("uptime: " + os.popen("uptime").read().strip())
    results: list[Any] = []
    if not args.only_dask:
        matches_and_coordinator(args, results)
    batch, paced, p50 = scheduler_cost(args.tasks, 2)
    print(f"(c) Dask, {args.tasks} trivial tasks on 2 workers: {batch * 1000:.2f} ms per task submitted at "
          f"once ({1 / batch:.0f}/s); {paced * 1000:.2f} ms per task with 4 in flight "
          f"(round trip p50 {p50 * 1000:.2f} ms)")  # fmt: skip


def matches_and_coordinator(args: argparse.Namespace, results: list[Any]) -> None:
    """Parts (a) and (b)."""
    print(f"(a) matches/s, 4-player greedy tables, {4 * args.games} matches per run", flush=True)
    rates, busy = {}, {}
    for where in ("cluster:1", "cluster:2", "cluster:2:unpinned", "local:2"):
        n, total, steady, used, kinds = run_matches(where, args.games, results)
        rates[where] = (n - 1) / steady
        busy[where] = used / total
        label = {
            "cluster:1": "Dask, 1 worker ",
            "cluster:2": "Dask, 2 workers",
            "cluster:2:unpinned": "Dask, 2 workers, unpinned",
            "local:2": "local --jobs 2 ",
        }
        print(
            f"    {label[where]}: {n} matches in {total:6.2f}s = {n / total:5.2f}/s overall, "
            f"{(n - 1) / steady:5.2f}/s steady; CPU {used / n * 1000:.0f} ms per match, "
            f"cores busy {used / total:.2f}",
            flush=True,
        )
        for kind, threads in sorted(kinds.items()):
            top = sorted(threads.items(), key=lambda kv: -kv[1])[:5]
            shown = ", ".join(f"{name} {v / n * 1000:.0f}" for name, v in top)
            print(f"        {kind:12} {sum(threads.values()) / n * 1000:5.0f} ms per match  ({shown})")
    print(f"    speed-up 2 vs 1 Dask workers (steady): {rates['cluster:2'] / rates['cluster:1']:.2f}x pinned "
          f"(the default), {rates['cluster:2:unpinned'] / rates['cluster:1']:.2f}x unpinned; cores busy "
          f"with 1 worker {busy['cluster:1']:.2f} (2 / that = {2 / busy['cluster:1']:.2f}x)")  # fmt: skip
    sizes = [len(r.replay.encode()) for r in results]
    packed = [len(zlib.compress(r.replay.encode(), 6)) for r in results]
    pickled = [len(pickle.dumps(r)) for r in results]
    print(
        f"    per match: replay {statistics.mean(sizes) / 1024:.1f} KiB "
        f"({statistics.mean(packed) / 1024:.1f} KiB compressed), result as sent by a worker "
        f"{statistics.mean(pickled) / 1024:.1f} KiB"
    )

    where = "PostgreSQL" if args.database_url and "postgres" in args.database_url else "SQLite"
    cost = coordinator_cost(results, args.absorb, args.database_url)
    print(f"(b) coordinator on {where}, {cost['matches']:.0f} precomputed results:", flush=True)
    print(
        f"    {cost['total'] * 1000:.2f} ms per match = {1 / cost['total']:.0f} matches/s absorbed; "
        f"record_result {cost['record_result'] * 1000:.2f} ms, mark_running "
        f"{cost['mark_running'] * 1000:.2f} ms, rest "
        f"{(cost['total'] - cost['record_result'] - cost['mark_running']) * 1000:.2f} ms"
    )


if __name__ == "__main__":
    sys.exit(main())
