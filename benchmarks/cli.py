"""CLI start-up: wall time of real ``arena`` commands against ``python -c pass``, in the same run.

Usage: .venv/bin/python benchmarks/cli.py [--repeat N] [--quick]

Each command runs as a fresh process (stdout and stderr discarded) N times; the runs are
interleaved (one of each command per round), so a busy machine slows all of them alike.  Reported
per command: the median and the fastest run in seconds, and the median as a multiple of the
``python -c pass`` median (the interpreter's own start, the floor any command pays).  The target
is 0.3 s for ``arena --help``, ``arena engine show`` and ``arena bots list``.

Rows:
  * ``python -c pass``: the baseline;
  * ``arena --help``: lists every command, imports none of them;
  * ``arena engine show FILE --step 40``: one board of a game record (engine only);
  * ``arena bots list --help``: ``bots list`` parsed and its module loaded, i.e. the moment the
    command starts its own work;
  * ``arena bots list``: the whole command, which opens the database (SQLModel/SQLAlchemy, the
    schema check) and lists one registered bot;
  * ``import every subcommand module``: what every command paid before subcommands loaded
    lazily (the old ``arena/cli/main.py`` imported them all).

``--quick``: 5 rounds (the default is 21).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = Path(sys.executable)
ARENA = PYTHON.with_name("arena")
TARGET = 0.3  # seconds
ALL_MODULES = (
    "import arena.cli.bots_cmd, arena.cli.engine_cmd, arena.cli.evaluate_cmd, arena.cli.leaderboard_cmd, "
    "arena.cli.match_cmd, arena.cli.replays_cmd, arena.cli.serve_cmd, arena.cli.tournament_cmd, "
    "arena.cli.web_cmd, arena.cli.worker_cmd"
)


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds of one run of ``argv`` to its end (it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="rounds (default 21)")
    parser.add_argument("--quick", action="store_true", help="5 rounds")
    args = parser.parse_args()
    rounds = 5 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="arena-cli-bench-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"}
        env.update(ARENA_HOME=str(home), COLUMNS="120")
        record = home / "game.jsonl"
        play = [str(ARENA), "engine", "play", "--seed", "3", "--out", str(record)]
        subprocess.run(play, env=env, check=True, cwd=home, capture_output=True)
        subprocess.run([str(ARENA), "bots", "add", "rnd", str(ROOT / "bots" / "random_bot.py"), "--no-check"],
                       env=env, check=True, cwd=home, capture_output=True)  # fmt: skip
        rows: list[tuple[str, list[str], bool]] = [
            ("python -c pass", [str(PYTHON), "-c", "pass"], False),
            ("arena --help", [str(ARENA), "--help"], True),
            ("arena engine show FILE --step 40",
             [str(ARENA), "engine", "show", str(record), "--step", "40"], True),
            ("arena bots list --help", [str(ARENA), "bots", "list", "--help"], True),
            ("arena bots list", [str(ARENA), "bots", "list"], True),
            ("import every subcommand module", [str(PYTHON), "-c", ALL_MODULES], False),
        ]  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name, _, _ in rows}
        for _name, argv, _ in rows:  # warm the file cache once
            timed(argv, env, home)
        for _ in range(rounds):
            for name, argv, _ in rows:
                times[name].append(timed(argv, env, home))
    base = statistics.median(times["python -c pass"])
    print(f"{rounds} rounds, interleaved; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'command':<36} {'median s':>9} {'min s':>7} {'x python':>9}  target {TARGET:g} s")
    for name, _, checked in rows:
        med, low = statistics.median(times[name]), min(times[name])
        verdict = ("ok" if med <= TARGET else "over") if checked else ""
        print(f"{name:<36} {med:>9.3f} {low:>7.3f} {med / base:>9.1f}  {verdict}")


if __name__ == "__main__":
    main()
