"""Tournament throughput: a 4-bot round robin at 4-player tables with greedy bots.

Usage: .venv/bin/python benchmarks/tournament.py [--quick] [--games N]

Runs the same tournament (same seeds) with --jobs 1 and --jobs 2 on fresh SQLite databases
and prints matches per second for each and the speed-up.  "steady" excludes the start of the
worker processes and bots (time from the first finished match to the last).

Where the time goes: the CPU seconds of the coordinator and of everything it started (worker
processes, their bots; counted once they are reaped) per match, and how many cores the run kept
busy (CPU / wall).  A match is a ping-pong between the referee and one bot at a time, so --jobs 1
keeps about one core busy, plus what runs beside it on the other core for free (the coordinator's
writes, gRPC's threads); --jobs 2 has to fit all of that twice into two cores.  The best speed-up
two idle cores allow is therefore about 2 / (cores busy at --jobs 1), printed as "bound".
``--quick``: 6 seeds (24 matches).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its reaped children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def run(jobs: int, games: int) -> tuple[int, float, float, float, float]:
    """Run the tournament with ``jobs`` workers; return matches, total and steady seconds, and the
    CPU seconds of the coordinator and of its children (workers and bots) during the run."""
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
    start = time.perf_counter()
    run_tournament(db, t.id, jobs=jobs, progress=progress)
    total = time.perf_counter() - start
    own2, kids2 = cpu()
    db.close()
    return len(stamps), total, stamps[-1] - stamps[0], own2 - own, kids2 - kids


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 seeds (24 matches)")
    parser.add_argument("--games", type=int, default=25, help="seeds (each played in 4 rotations)")
    args = parser.parse_args()
    games = 6 if args.quick else args.games
    print(f"uptime: {uptime()}")
    results = {}
    for jobs in (1, 2):
        n, total, steady, own, kids = run(jobs, games)
        results[jobs] = (n, total, steady, own, kids)
        print(
            f"--jobs {jobs}: {n} matches in {total:.2f}s = {n / total:.2f} matches/s overall, "
            f"{(n - 1) / steady:.2f} matches/s steady; CPU per match: coordinator "
            f"{own / n * 1000:.0f} ms, workers and bots {kids / n * 1000:.0f} ms; "
            f"cores busy {(own + kids) / total:.2f}",
            flush=True,
        )
    (n1, t1, s1, o1, k1), (n2, t2, s2, _, _) = results[1], results[2]
    print(f"speed-up --jobs 2 vs 1: {t1 / t2:.2f}x overall, {((n2 - 1) / s2) / ((n1 - 1) / s1):.2f}x steady; "
          f"bound on 2 idle cores: 2 / {(o1 + k1) / t1:.2f} cores busy at --jobs 1 = "
          f"{2 / ((o1 + k1) / t1):.2f}x")  # fmt: skip
    print(f"uptime: {uptime()}")


if __name__ == "__main__":
    main()
