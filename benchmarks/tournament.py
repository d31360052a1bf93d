"""Tournament throughput: a 4-bot round robin at 4-player tables with greedy bots.

Usage: .venv/bin/python benchmarks/tournament.py [--games N]

Runs the same tournament (same seeds) with --jobs 1 and --jobs 2 on fresh SQLite databases
and prints matches per second for each and the speed-up.  "steady" excludes the start of the
worker processes and bots (time from the first finished match to the last).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(jobs: int, games: int) -> tuple[int, float, float]:
    """Run the tournament with ``jobs`` workers; return matches, total and steady seconds."""
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

    start = time.perf_counter()
    run_tournament(db, t.id, jobs=jobs, progress=progress)
    total = time.perf_counter() - start
    db.close()
    return len(stamps), total, stamps[-1] - stamps[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=25, help="seeds (each played in 4 rotations)")
    args = parser.parse_args()
    results = {}
    for jobs in (1, 2):
        n, total, steady = run(jobs, args.games)
        results[jobs] = (n, total, steady)
        print(
            f"--jobs {jobs}: {n} matches in {total:.2f}s = {n / total:.2f} matches/s overall, "
            f"{(n - 1) / steady:.2f} matches/s steady"
        )
    (n1, t1, s1), (n2, t2, s2) = results[1], results[2]
    print(f"speed-up --jobs 2 vs 1: {t1 / t2:.2f}x overall, {((n2 - 1) / s2) / ((n1 - 1) / s1):.2f}x steady")


if __name__ == "__main__":
    main()
