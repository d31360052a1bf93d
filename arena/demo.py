"""The main job: a demo tournament of the sample bots on the embedded SQLite database.

Registers the sample bots in ``bots/`` (new versions only when a file changed), runs a
round robin with 2- and 4-player tables, every seat rotation and duplicate dice, prints the
leaderboard with 95% intervals, and exports every replay as a JSON Lines file.

Usage: ``python -m arena.demo [--games N] [--move-time S] [--jobs J] [--seed S]`` (``./dev demo``).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from sqlmodel import select

from arena.cli.closed_output import (
    escape_unencodable,
    exit_output_gone,
    forget_unusable_width,
    mute,
    open_standard_streams,
    output_gone,
    say_last,
)
from arena.engine.chance import SEED_LIMIT
from arena.leaderboard import leaderboard, render, store_ratings
from arena.lifecycle import Stopped, StopSignals, exit_status, ignore_stop_signals
from arena.sandbox import SandboxLimits, bwrap_problem
from arena.store.bots import DuplicateUploadError, add_bot
from arena.store.db import Database, StoreError, arena_home
from arena.store.models import Match, MatchStatus
from arena.store.tournaments import load_replay, status_counts
from arena.termui import keep_going_on_closed_pipe, make_console
from arena.tournament.display import TournamentDisplay, stopped_message
from arena.tournament.runner import default_jobs, run_tournament
from arena.tournament.service import create

REPO = Path(__file__).resolve().parent.parent
SAMPLES = ("greedy", "greedy-naive", "invader", "search", "random")


def register_samples(db: Database) -> list[str]:
    """Register every sample bot present in bots/; return their names."""
    names = []
    for name in SAMPLES:
        path = REPO / "bots" / f"{name.replace('-', '_')}_bot.py"
        if not path.exists():
            continue
        with contextlib.suppress(DuplicateUploadError):  # already registered, unchanged
            add_bot(db, name, path)
        names.append(name)
    return names


def export_replays(db: Database, tournament_id: int, folder: Path) -> int:
    """Write every finished match's replay to ``folder/<match id>.jsonl``; return how many."""
    folder.mkdir(parents=True, exist_ok=True)
    with db.session() as session:
        ids = session.exec(
            select(Match.id).where(Match.tournament_id == tournament_id, Match.status == MatchStatus.FINISHED)
        ).all()
    for mid in ids:
        assert mid is not None
        (folder / f"match-{mid}.jsonl").write_text(load_replay(db, mid), encoding="utf-8")
    return len(ids)


def _at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}; give {low} or more")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0; give e.g. 0.2")
    return value


def _seed(text: str) -> int:
    """An argparse type: a tournament seed, 0 <= seed < 2**63 (the limit of a match seed, rules §5)."""
    value = _at_least(0)(text)
    if value >= SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"{value} is not below 2**63; give 0 to {SEED_LIMIT - 1}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="./dev demo", description="Pool Arena demo tournament of the sample bots"
    )
    parser.add_argument("--games", type=_at_least(1), default=2, help="seeds per table (default 2)")
    parser.add_argument(
        "--move-time", type=_seconds, default=0.2, help="seconds per decision, above 0 (default 0.2)"
    )
    parser.add_argument("--jobs", type=_at_least(1), default=default_jobs(), help="matches in parallel")
    parser.add_argument(
        "--seed", type=_seed, default=None,
        help=f"tournament seed, 0 to {SEED_LIMIT - 1}: the same seed deals the same dice "
        "(default: random, printed)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    console = make_console()
    # a closed stdout (`./dev demo | head -1`, `| true`) loses the text, not the run
    keep_going_on_closed_pipe(console)
    try:
        db = Database()
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    bots = register_samples(db)
    problem = bwrap_problem()
    if problem is not None:
        console.print(
            f"[yellow]note:[/yellow] {problem}; the sample bots are our own, so the demo runs them "
            "unsandboxed (user bots are refused without a sandbox unless you pass --no-sandbox)."
        )
    seed = random.randrange(2**32) if args.seed is None else args.seed  # printed below: rerunnable
    t = create(
        db,
        bots,
        table_sizes=(2, 4),
        games=args.games,
        seed=seed,
        move_time=args.move_time,
        bank=max(2.0, 10 * args.move_time),
        name=f"demo: {', '.join(bots)}",
        sandbox=None if problem else SandboxLimits(),
    )
    assert t.id is not None
    total = sum(status_counts(db, t.id).values())
    console.print(
        f"Demo tournament {t.id}: {', '.join(bots)}; round robin with 2- and 4-player tables, every seat "
        f"rotation, duplicate dice; {total} matches, {args.jobs} in parallel, "
        f"{args.move_time:g}s per decision; seed {seed} (the same matches again: "
        f"./dev demo --seed {seed}).",
        soft_wrap=True,  # one line, wrapped by the terminal only: never a break inside the command
    )
    try:
        again = f"'{arena_command()} tournament resume {t.id}' plays what is left"
        with StopSignals(hint=again), TournamentDisplay(f"tournament {t.id}", total=total) as display:
            run_tournament(db, t.id, jobs=args.jobs, progress=display)
    except Stopped as stop:  # Ctrl-C, SIGTERM, SIGHUP: one line, the results kept (as 'arena tournament')
        message = f"error: {stopped_message(db, t.id, stop, arena_command())}"
        db.close()
        ignore_stop_signals()  # only the exit is left: a closed terminal's second SIGHUP must not kill it
        say_last(message)
        if console.quiet:  # stdout went away earlier: its unwritten text must not fail the exit
            mute()
        return exit_status(stop.signum)
    rows = leaderboard(db, tournament_id=t.id, system="pl")
    store_ratings(db, rows, "pl", f"tournament:{t.id}", tournament_id=t.id)
    counts = status_counts(db, t.id)
    folder = arena_home() / "replays" / f"tournament-{t.id}"
    n = export_replays(db, t.id, folder)  # before anything is printed: a closed pipe loses only text
    console.print(render(rows, "pl", f"Demo tournament {t.id}"))
    played = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    # soft_wrap: a long path stays on one line, whole, however narrow the terminal (to copy it)
    console.print(f"Matches: {played}. Database: {db.url}", markup=False, highlight=False, soft_wrap=True)
    replays = f"Replays ({n}): {folder.resolve()}/  (check one: {arena_command()} engine verify <file>)"
    console.print(replays, soft_wrap=True)
    # as 'arena tournament run' does: a bot that forfeited gets one line with the first reason (a
    # demo whose bots all crashed, say in a broken sandbox, showed only '48' in the forfeits column)
    from arena.cli.tournament_cmd import forfeit_notes

    for note in forfeit_notes(db, t.id, rows):
        print(note, file=sys.stderr)
    db.close()
    if console.quiet:  # stdout went away: as Python and rich end on a closed pipe
        mute()
        return 1
    return 0


def arena_command() -> str:
    """How to call ``arena`` from this shell: ``arena`` when that is on PATH and is this
    installation's, else this installation's script (``.venv/bin/arena`` when it lies under the
    working directory, else its absolute path): ``./dev demo`` runs without an activated venv."""
    script = Path(sys.executable).parent / "arena"
    found = shutil.which("arena")
    if found is not None and Path(found).resolve() == script.resolve():
        return "arena"
    try:
        return str(script.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(script.absolute())


def run() -> int:
    """``main`` with a Ctrl-C outside the tournament (while registering the bots, before the
    first match) ending in one line and status 130, and a closed output (a pipe's reader left, a
    hung-up terminal) ending quietly, like every ``arena`` command."""
    open_standard_streams()
    forget_unusable_width()
    escape_unencodable()
    try:
        return main()
    except KeyboardInterrupt:
        print("error: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except OSError as exc:
        if output_gone(exc):  # `./dev demo | head` left, or the terminal hung up: quietly
            exit_output_gone(exc)
        raise


if __name__ == "__main__":
    sys.exit(run())
