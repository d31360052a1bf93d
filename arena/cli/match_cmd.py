"""``arena match``: run one match between bots and show the result."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from arena.botref import resolve
from arena.endings import Reason
from arena.engine.chance import SEED_LIMIT
from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules
from arena.hosting import BotSpec, sandbox_choice
from arena.matchrunner import play_local_match
from arena.outpaths import folder_problem, output_problem, write_problem
from arena.referee import MatchResult, TimeControl
from arena.referee.match import Match
from arena.referee.timecontrol import MAX_BANK, MAX_MOVE_TIME
from arena.sandbox import BotLaunchError, SandboxUnavailableError
from arena.sandbox.launcher import fit_log_stem
from arena.seeds import secret_seed
from arena.termui import StatusLine, make_console

from .common import (
    DEFAULT_LOGS_ADVICE,
    FORFEIT_EXIT,
    refuse_clock_with_unlimited,
    refuse_path,
    refuse_unknown_bots,
)
from .interrupt import run_interruptible
from .rules_option import RULES_HELP, parse_rules

if TYPE_CHECKING:
    from arena.store.db import Database

STDERR_LINES = 12  # lines of a crashed bot's stderr shown


def match(
    ctx: typer.Context,
    bots: Annotated[
        list[str],
        typer.Argument(
            metavar="BOT",
            help="2-4 bots, each a script/executable path, a registered bot (NAME or NAME@N) or a sample "
            "name (greedy, greedy-naive, invader, random, search)",
        ),
    ],
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="match seed (default: random)")
    ] = None,
    move_time: Annotated[
        float, typer.Option(min=0.001, max=MAX_MOVE_TIME, help="seconds per decision")
    ] = 1.0,
    bank: Annotated[float, typer.Option(min=0.0, max=MAX_BANK, help="overage bank in seconds")] = 10.0,
    unlimited: Annotated[bool, typer.Option(help="no time limits (debugging)")] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            help="also write the replay to this file (it is stored in the database); missing folders are "
            "created, a path that cannot be written is refused before the match"
        ),
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option(help="directory for the bots' stdout/stderr logs (default: <ARENA_HOME>/logs/matches)"),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="no progress, only the result")] = False,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run the bots unsandboxed (only bots you trust)")
    ] = False,
    cpu_time: Annotated[
        bool, typer.Option("--cpu-time", help="charge bots their CPU time instead of wall-clock time")
    ] = False,
    record: Annotated[
        bool,
        typer.Option(help="store the match in the database (--no-record: only --out keeps the replay)"),
    ] = True,
    rules: Annotated[str | None, typer.Option(help=RULES_HELP)] = None,
) -> None:
    """Run one match between 2-4 bots launched as processes; show progress and the result.

    The match is stored in the database under ARENA_HOME (see 'arena replays'); it does not count
    in ratings.  Exit status: 0 when every bot played to the end, 3 when a bot forfeited (it
    crashed, timed out, broke a rule, ...: the reason and its error are shown), 2 when the match
    could not start (a bad bot reference, no sandbox, an --out or --logs path that cannot be
    written), 1 when the replay could not be written or stored after the match (the result is
    still shown, and where the replay is kept).
    """
    if not 2 <= len(bots) <= 4:
        raise typer.BadParameter(f"a match needs 2 to 4 bots, got {len(bots)}", param_hint="BOTS")
    refuse_clock_with_unlimited(ctx, unlimited)
    chosen = parse_rules(rules)
    from arena.store.db import Database, StoreError, arena_home

    if record:  # neither a new database nor its logs folder for a match that cannot be played
        refuse_unknown_bots(bots)
    advice = "give another path"
    if logs is None:  # the default under ARENA_HOME: the user gave no path to change
        logs = arena_home() / "logs" / "matches"
        advice = DEFAULT_LOGS_ADVICE
    refuse_path(logs, folder_problem(logs), advice)
    if out is not None:
        refuse_path(out, output_problem(out))

    db: Database | None = None
    if record:
        try:
            db = Database()
        except StoreError as exc:
            typer.echo(f"error: {exc} (or play without the database: --no-record)", err=True)
            raise typer.Exit(1) from None
    try:
        _play(
            db,
            bots,
            seed,
            move_time,
            bank,
            unlimited,
            out,
            logs,
            quiet,
            no_sandbox,
            cpu_time,
            chosen,
        )
    finally:
        if db is not None:
            db.close()


def _play(
    db: Database | None,
    bots: list[str],
    seed: int | None,
    move_time: float,
    bank: float,
    unlimited: bool,
    out: Path | None,
    logs: Path,
    quiet: bool,
    no_sandbox: bool,
    cpu_time: bool,
    rules: Rules = DEFAULT_RULES,
) -> None:
    from sqlalchemy.exc import OperationalError  # a full disk, a dropped connection

    from arena.store.db import StoreError
    from arena.store.tournaments import record_failure, record_result

    try:
        no_db = "not a registered bot (with --no-record the database is not read)"
        resolved = [resolve(b, db, no_db=no_db) for b in bots]
    except (BotLaunchError, StoreError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    specs = _unique_names([BotSpec(r.name, r.command) for r in resolved])
    seed = secret_seed() if seed is None else seed
    control = TimeControl(unlimited=True) if unlimited else TimeControl(move_time, bank, cpu=cpu_time)
    sandbox = sandbox_choice(no_sandbox)
    console = make_console(stderr=True)
    stored: int | None = None
    unsaved = False  # played, but the database refused the result
    if db is not None:
        from arena.botref import stored_version
        from arena.store.adhoc import start_adhoc_match

        try:
            ids = [stored_version(db, r).id for r in resolved]
            stored = start_adhoc_match(db, seed, [i for i in ids if i is not None])
        except (StoreError, OperationalError) as exc:
            typer.echo(f"error: {_store_failure(db, exc)}", err=True)
            raise typer.Exit(2) from None
    match_id = f"m{stored}" if stored is not None else f"m{seed % 10**8:08d}-{random.randrange(16**4):04x}"
    label = f"match {stored}" if stored is not None else f"match {match_id}"
    variant = "" if rules == DEFAULT_RULES else f"  rules {rules.variant} ({rules.version})"
    players = " vs ".join(s.name for s in specs)
    progress = _Progress(console, quiet)
    try:  # from here a stop signal (SIGTERM before the event loop too) records the match as failed
        console.print(f"{label}: {players}  seed {seed}  {control.describe()}{variant}")
        result = run_interruptible(
            play_local_match(
                specs,
                seed,
                control,
                match_id=match_id,
                log_dir=logs,
                on_event=progress,
                sandbox=sandbox,
                rules=rules,
            )
        )
    except (BotLaunchError, SandboxUnavailableError) as exc:
        progress.close()
        if db is not None and stored is not None:
            record_failure(db, stored, str(exc))
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except BaseException:
        progress.close()
        if db is not None and stored is not None:
            record_failure(db, stored, "interrupted")
        raise
    progress.close()
    if db is not None and stored is not None:
        try:
            record_result(db, stored, result)
        except (StoreError, OperationalError) as exc:  # e.g. its disk filled up during the match
            typer.echo(
                f"error: the match was played but could not be stored: {_store_failure(db, exc)}", err=True
            )
            stored, unsaved = None, True
            out = out or logs / f"{match_id}.jsonl"  # the replay is not lost
    write_error = None  # written after the result is shown, so that a failed write hides nothing
    if out is not None and (failed := write_problem(out, result.replay)) is not None:
        fallback = logs / f"{match_id}.jsonl"
        if stored is not None:
            kept_as: Path | None = None
            where = f"the replay is stored as match {stored}"
        elif out != fallback and write_problem(fallback, result.replay) is None:
            kept_as, where = fallback, f"the replay is in {fallback} instead"
        else:
            kept_as, where = None, "the replay is lost"
        write_error = f"cannot write {out}: {failed}; {where}"
        out = kept_as
    make_console().print(result_table(result, label))
    for f in result.forfeits:
        name = specs[f.seat].name
        console.print(
            f"seat {f.seat} ({name}) forfeited: {f.reason}: {f.detail}", markup=False, highlight=False
        )
        log = logs / f"{fit_log_stem(f'{match_id}-seat{f.seat}-{name}')}.stderr.log"  # the host's name
        tail = str(f.evidence.get("stderr_tail", "")) if f.reason is Reason.CRASHED else ""
        if tail.strip():
            lines = tail.rstrip().splitlines()[-STDERR_LINES:]
            console.print(f"  its stderr, last {len(lines)} lines (all of it: {log}):", markup=False)
            for line in lines:
                console.print(f"  | {line}", markup=False, highlight=False)
    kept = [f"stored as match {stored} ('arena replays show {stored}')"] if stored is not None else []
    if out is not None:
        kept.append(f"replay: {out}")
    elif stored is None and write_error is None:
        kept.append("replay not kept (--no-record without --out)")
    console.print("   ".join([*kept, f"bot logs: {logs}/"]), markup=False, highlight=False)
    if write_error is not None:
        typer.echo(f"error: {write_error}", err=True)
    if unsaved or write_error is not None:
        raise typer.Exit(1)
    if result.forfeits:
        raise typer.Exit(FORFEIT_EXIT)


def _store_failure(db: Database, exc: Exception) -> str:
    """What a store error says, or the first line of what the database said (a full disk)."""
    from arena.store.db import StoreError
    from arena.store.retry import failure_line

    if isinstance(exc, StoreError):
        return str(exc)
    return f"the database {db.where} failed: {failure_line(exc)}"


def _unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    counts: dict[str, int] = {}
    out = []
    for s in specs:
        counts[s.name] = counts.get(s.name, 0) + 1
        out.append(s if counts[s.name] == 1 else BotSpec(f"{s.name}#{counts[s.name]}", s.command))
    return out


class _Progress(StatusLine):
    """One status line per round."""

    def __init__(self, console: Console, quiet: bool) -> None:
        super().__init__(quiet)
        self.console = console
        self.round = -1

    def __call__(self, m: Match) -> None:
        state = m.state
        if self.quiet or state.round == self.round:
            return
        self.round = state.round
        from arena.engine import scores

        self.write(
            f"round {state.round:>3}  unoccupied {state.unoccupied:>2}  scores {list(scores(state))}"
            if state.round
            else "setup"
        )


def result_table(result: MatchResult, label: str) -> Table:
    """The match result as a table: one row per seat, best first, titled ``label`` and the ending.

    ``label`` names the match as the rest of the CLI does: ``match 7`` for a stored match (its
    id in the database, as 'arena replays show 7' takes it), the referee's key (``match
    m00000005-1a2b``) only for a match that is not stored."""
    from arena.endings import match_label, seat_label

    offenders = [(result.seats[f.seat].name, str(f.reason)) for f in result.forfeits]
    ending = match_label(result.termination, offenders)
    table = Table(title=f"{label} (end: {ending}, {result.duration:.1f}s)")
    for col, justify in (
        ("place", "right"),
        ("seat", "right"),
        ("bot", "left"),
        ("score", "right"),
        ("end", "left"),
        ("moves", "right"),
        ("think", "right"),
        ("max", "right"),
        ("cpu", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for s in sorted(result.seats, key=lambda s: (s.placing, s.seat)):
        table.add_row(
            str(s.placing),
            str(s.seat),
            s.name,
            str(s.score),
            seat_label(s.termination, s.placing),
            str(s.decisions),
            f"{s.think_total:.3f}s",
            f"{s.think_max * 1000:.1f}ms",
            "-" if s.cpu_time is None else f"{s.cpu_time:.3f}s",
        )
    return table
