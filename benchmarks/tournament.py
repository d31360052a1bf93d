"""Tournament throughput: a 4-bot round robin at 4-player tables with greedy bots.

Usage: .venv/bin/python benchmarks/tournament.py [--quick] [--games N]

Runs the same tournament (same seeds) with --jobs 1 and --jobs 2 on fresh SQLite databases
and prints matches per second for each and the speed-up.  "steady" excludes the start of the
worker processes and bots (time from the first finished match to the last).

Three runs: --jobs 1, --jobs 2 (its workers pinned to a core each, the default:
:mod:`arena.tournament.affinity`) and --jobs 2 unpinned, then the machine's own ceiling: the
same greedy games in one process, then in two processes at once (pure CPU, nothing handed
between processes), median of interleaved rounds.

Where the time goes: the CPU seconds of the coordinator and of everything it started (worker
processes, their bots; counted once they are reaped) per match, and how many cores the run kept
busy (CPU / wall); then the same split by process (coordinator, worker, bot) and by thread
within it (``main``; ``python``: the worker's event loop thread; ``event_engine``: gRPC's),
sampled from ``/proc`` (:mod:`proctree`), and how CPU per match grows from --jobs 1 to --jobs 2.
A match is a ping-pong between the referee and one bot at a time, so --jobs 1 keeps about one
core busy plus what runs beside it (gRPC's threads, the coordinator's writes).
``--quick``: 6 seeds (24 matches).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from proctree import TreeCpu

ROOT = Path(__file__).resolve().parent.parent


def cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its reaped children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def run(
    jobs: int, games: int, pin: bool | None = None
) -> tuple[int, float, float, float, float, dict[str, dict[str, float]], float]:
    """Run the tournament with ``jobs`` workers; return matches, total and steady seconds, the
    CPU seconds of the coordinator and of its children (workers and bots) during the run, the
    CPU seconds by kind of process and thread (:mod:`proctree`) and the sampler's own CPU seconds."""
    home = tempfile.mkdtemp(prefix="arena-bench-")
    os.environ["ARENA_HOME"] = home
    os.environ.pop("ARENA_DATABASE_URL", None)
    from arena.store.bots import add_bot
    from arena.store.db import Database
    from arena.tournament.runner import Progress, run_tournament
    from arena.tournament.service import create

    db = Database()
    names = [f"greedy{k}" for k in range(4)]
    for name in names:
        add_bot(db, name, ROOT / "bots" / "greedy_bot.py")
    t = create(db, names, table_sizes=(4,), games=games, seed=99, move_time=5, bank=30)
    assert t.id is not None
    stamps: list[float] = []

    def progress(p: Progress) -> None:
        stamps.append(time.perf_counter())

    own, kids = cpu()
    tree = TreeCpu(interval=0.2)
    start = time.perf_counter()
    run_tournament(db, t.id, jobs=jobs, progress=progress, pin=pin)
    total = time.perf_counter() - start
    kinds = tree.stop_threads()
    own2, kids2 = cpu()
    db.close()
    return len(stamps), total, stamps[-1] - stamps[0], own2 - own, kids2 - kids, kinds, tree.own_cost


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _greedy_games(seed: int) -> float:
    """Wall seconds for 2 four-player greedy duplicate groups in this process (pure CPU)."""
    from arena.strength.duel import factory, play_group

    greedy = factory("greedy")
    start = time.perf_counter()
    for k in range(2):
        play_group(greedy, greedy, 4, seed + k)
    return time.perf_counter() - start


def machine_ceiling(rounds: int) -> tuple[float, float, float]:
    """The speed-up this machine gives two CPU-bound Python processes with nothing to hand off:
    the same greedy games alone, then twice at once in two processes, ``rounds`` times
    interleaved; (median, min, max) of alone / (slower of the two) x 2."""
    ctx = multiprocessing.get_context("spawn")
    ratios = []
    with ctx.Pool(2) as pool:
        pool.map(_greedy_games, [0, 0])  # imports, warm-up
        for r in range(rounds):
            alone = _greedy_games(100 + r)
            both = pool.map(_greedy_games, [100 + r, 100 + r])
            ratios.append(2 * alone / max(both))
    return statistics.median(ratios), min(ratios), max(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 seeds (24 matches)")
    parser.add_argument("--games", type=int, default=25, help="seeds (each played in 4 rotations)")
    args = parser.parse_args()
    games = 6 if args.quick else args.games
    print(f"uptime: {uptime()}")
    results = {}
    by_kind: dict[str, dict[str, float]] = {}
    for label, jobs, pin in (("--jobs 1", 1, None), ("--jobs 2", 2, True), ("--jobs 2 unpinned", 2, False)):
        n, total, steady, own, kids, kinds, sampler = run(jobs, games, pin)
        results[label] = (n, total, steady, own, kids)
        by_kind[label] = {k: sum(v.values()) / n for k, v in kinds.items()}
        print(
            f"{label}: {n} matches in {total:.2f}s = {n / total:.2f} matches/s overall, "
            f"{(n - 1) / steady:.2f} matches/s steady; CPU per match: coordinator "
            f"{own / n * 1000:.0f} ms, workers and bots {kids / n * 1000:.0f} ms; "
            f"cores busy {(own + kids) / total:.2f}",
            flush=True,
        )
        print(f"    by process and thread (sampled from /proc), ms per match; the sampler's own "
              f"share of the coordinator {sampler / n * 1000:.0f}:")  # fmt: skip
        for kind, threads in sorted(kinds.items()):
            top = sorted(threads.items(), key=lambda kv: -kv[1])
            shown = ", ".join(f"{name} {v / n * 1000:.0f}" for name, v in top if v / n >= 0.0005)
            print(f"      {kind:12} {sum(threads.values()) / n * 1000:5.0f}  ({shown})")
    one = by_kind["--jobs 1"]
    n1, t1, s1, o1, k1 = results["--jobs 1"]
    for label in ("--jobs 2", "--jobs 2 unpinned"):
        two = by_kind[label]
        n2, t2, s2, _, _ = results[label]
        kinds = sorted(set(one) | set(two))
        more = ", ".join(f"{k} {(two.get(k, 0.0) - one.get(k, 0.0)) * 1000:+.0f} ms" for k in kinds)
        steady = ((n2 - 1) / s2) / ((n1 - 1) / s1)
        print(f"speed-up {label} vs --jobs 1: {t1 / t2:.2f}x overall, {steady:.2f}x steady; "
              f"CPU per match against --jobs 1: {more}")  # fmt: skip
    busy = (o1 + k1) / t1
    print(f"cores busy at --jobs 1: {busy:.2f}; 2 / that = {2 / busy:.2f}x, the speed-up if --jobs 2 "
          f"did the same work in the same way")  # fmt: skip
    median, low, high = machine_ceiling(3 if args.quick else 7)
    print(f"the machine's own ceiling (the same greedy games in one process, then in two at once): "
          f"{median:.2f}x median ({low:.2f}-{high:.2f})")  # fmt: skip
    print(f"uptime: {uptime()}")


if __name__ == "__main__":
    main()
