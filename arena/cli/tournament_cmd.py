"""``arena tournament``: create, run, resume and inspect tournaments."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated

import typer
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from arena.botref import sample_bots
from arena.engine.chance import SEED_LIMIT
from arena.engine.variants import rules_label
from arena.leaderboard import LeaderRow, leaderboard, render, store_ratings
from arena.lifecycle import Stopped, StopSignals, exit_status
from arena.matchrunner import sandbox_choice
from arena.referee.timecontrol import MAX_BANK, MAX_MOVE_TIME
from arena.sandbox import SandboxLimits
from arena.seeds import secret_seed
from arena.store.crosstable import CrossTable, cross_table
from arena.store.db import Database, arena_home
from arena.store.lease import LeaseHolder, coordinated, lease_holder, shown_status
from arena.store.models import Tournament
from arena.store.results import first_forfeits
from arena.store.retry import failure_line, retried
from arena.store.tournaments import (
    check_entry_files,
    get_tournament,
    list_tournaments,
    status_counts,
    time_control_text,
)
from arena.termui import make_console
from arena.tournament.display import ROUND_BY_ROUND, TournamentDisplay, stopped_message, tournament_state
from arena.tournament.formats import CONTINUOUS
from arena.tournament.formats.swiss import default_rounds
from arena.tournament.pull import planned_total, ranked_versions
from arena.tournament.pull import report as format_report
from arena.tournament.runner import default_jobs, run_tournament
from arena.tournament.service import FORMATS, MAX_GAMES, TournamentConfigError, create

from .common import MAX_JOBS, database, fail, refuse_unknown_bots
from .rules_option import RULES_HELP, parse_rules

app = typer.Typer(
    help="Tournaments with duplicate dice: round robin, gauntlet, Swiss, knockout.", no_args_is_help=True
)

BotsArg = Annotated[
    list[str],
    typer.Argument(
        metavar="BOT", help="the bots: registered (NAME or NAME@VERSION), sample names, or bot files"
    ),
]
FormatOpt = Annotated[str, typer.Option("--format", help=f"one of {', '.join(FORMATS)}")]
RoundsOpt = Annotated[
    int | None, typer.Option("--rounds", min=1, help="swiss: rounds to play (default: ceil(log2(bots)))")
]
SeedingOpt = Annotated[
    str,
    typer.Option(
        "--seeding",
        help="knockout: 'order' (as listed) or 'rating' (the pl rating over every finished tournament match)",
    ),
]
TablesOpt = Annotated[str, typer.Option("--tables", help="players per table, e.g. 2 or 2,4")]
GamesOpt = Annotated[
    int, typer.Option(min=1, max=MAX_GAMES, help="seeds per table; each is played under every seat rotation")
]
SeedOpt = Annotated[
    int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="tournament seed (default: random)")
]
MoveOpt = Annotated[float, typer.Option(min=0.001, max=MAX_MOVE_TIME, help="seconds per decision")]
BankOpt = Annotated[float, typer.Option(min=0.0, max=MAX_BANK, help="overage bank in seconds")]
JobsOpt = Annotated[
    int | None, typer.Option(min=1, max=MAX_JOBS, help="matches in parallel (default: number of cores)")
]
PinOpt = Annotated[
    bool | None,
    typer.Option(
        "--pin/--no-pin",
        help="keep each worker on this machine and its bots on a core of their own (default: on when "
        "2 <= --jobs (or --local-cluster) <= cores, unless ARENA_PIN_WORKERS=0)",
        show_default=False,
    ),
]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="ADDRESS",
        help="play the matches on a Dask cluster: its scheduler, e.g. tcp://HOST:8786 (see 'arena worker')",
    ),
]
LocalClusterOpt = Annotated[
    int | None,
    typer.Option(
        "--local-cluster",
        min=1,
        max=MAX_JOBS,
        metavar="N",
        help="play the matches on a local Dask cluster of N worker processes",
    ),
]
WaitOpt = Annotated[
    bool,
    typer.Option(
        "--wait", help="if another coordinator is running this tournament, wait for it instead of exiting"
    ),
]
CandOpt = Annotated[str | None, typer.Option(help="gauntlet: the bot that plays against the field")]
NameOpt = Annotated[str | None, typer.Option(help="a name for the tournament")]
NoSandboxOpt = Annotated[
    bool, typer.Option("--no-sandbox", help="run the bots unsandboxed (only bots you trust)")
]
CpuClockOpt = Annotated[bool, typer.Option("--cpu-time", help="charge bots CPU time, not wall-clock time")]
MemOpt = Annotated[int, typer.Option(min=16, help="sandbox: memory per bot in MiB")]
ProcsOpt = Annotated[int, typer.Option(min=1, help="sandbox: processes/threads per bot")]
CpuSecOpt = Annotated[int, typer.Option(min=1, help="sandbox: CPU seconds per bot process in all")]
RulesOpt = Annotated[str | None, typer.Option("--rules", help=RULES_HELP)]


def _tables(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise typer.BadParameter(
            f"expected sizes like 2 or 2,4, got {text!r}", param_hint="--tables"
        ) from None
    if any(not 2 <= k <= 4 for k in sizes) or len(set(sizes)) != len(sizes):
        raise typer.BadParameter("table sizes are distinct numbers from 2 to 4", param_hint="--tables")
    return sizes


def _create(
    db: Database,
    bots: list[str],
    fmt: str,
    tables: str,
    games: int,
    seed: int | None,
    move_time: float,
    bank: float,
    candidate: str | None,
    name: str | None,
    sandbox: SandboxLimits | None,
    cpu_clock: bool,
    rules: str | None = None,
    rounds: int | None = None,
    seeding: str = "order",
) -> int:
    """Create the tournament and print its one-line summary; return its id.

    Options that do not go together (``--rounds`` with a round robin, a gauntlet without
    ``--candidate``, too few bots for the tables, ...) are a usage error: one line, exit 2.
    A bot that cannot be found stays a data error (exit 1, from :func:`database`)."""
    if fmt in CONTINUOUS:
        raise typer.BadParameter(
            f"the {fmt} never ends: run it with 'arena ladder run'; a tournament's format is one of "
            f"{', '.join(FORMATS)}",
            param_hint="--format",
        )
    if fmt not in FORMATS:
        raise typer.BadParameter(f"choose one of {', '.join(FORMATS)}", param_hint="--format")
    try:
        t = create(
            db,
            bots,
            fmt=fmt,
            table_sizes=_tables(tables),
            games=games,
            seed=secret_seed() if seed is None else seed,
            move_time=move_time,
            bank=bank,
            candidate=candidate,
            name=name,
            sandbox=sandbox,
            cpu_clock=cpu_clock,
            rules=parse_rules(rules),
            rounds=rounds,
            seeding=seeding,
        )
    except TournamentConfigError as exc:
        raise fail(str(exc), 2) from None
    assert t.id is not None
    where = "sandboxed" if sandbox else "NOT sandboxed"
    typer.echo(
        f"tournament {t.id}: {t.name}, {_matches_text(db, t.id)}, seed {t.seed}, bots {where}", err=True
    )
    if seeding == "rating" and fmt == "knockout":
        typer.echo(_seeds_line(t), err=True)
    if fmt == "swiss" and tables.isdigit():  # the default rounds too (4 bots at a 4-player table: 2)
        note = _repeat_note(
            len(bots), int(tables), rounds if rounds is not None else default_rounds(len(bots))
        )
        if note:
            typer.echo(note, err=True)
    return t.id


def _matches_text(db: Database, tournament_id: int) -> str:
    """How many matches a just-created tournament has queued: ``40 matches`` for a schedule stored
    whole; for a format that makes its rounds as it goes (Swiss, knockout) ``4 matches queued
    (round 1), 12 in all`` (the bare count of round 1 read as the whole tournament's)."""
    total = sum(status_counts(db, tournament_id).values())
    planned = planned_total(db, tournament_id)
    if planned is None or planned == total:
        return f"{total} matches"
    return f"{total} matches queued (round 1), {planned} in all"


def _repeat_note(bots: int, size: int, rounds: int) -> str | None:
    """The note for a Swiss tournament with more rounds than there can be rounds in which no two
    bots meet again: each round a bot meets ``size - 1`` others of its ``bots - 1`` (in 2-player
    tables an odd field has a bye each round, one more round); None when every round can be new.
    With 3-4 player tables a second new round also needs each of its tables drawn from ``size``
    different tables (or byes) of the first: 8 bots at two 4-player tables cannot have one."""
    if size == 2:
        fresh = bots - 1 + bots % 2
    else:
        seated, byes = divmod(bots, size)  # first-round tables, byes
        # fewer first-round tables than seats at a table: the round-2 tables need more of the
        # first round's byes than there are, so some two bots meet again
        fresh = 1 if seated * max(0, size - seated) > byes else max(1, (bots - 1) // (size - 1))
    if rounds <= fresh:
        return None
    later = f"round {rounds} repeats" if rounds == fresh + 1 else f"rounds {fresh + 1} to {rounds} repeat"
    tables = "table" if size == 2 else f"{size}-player table"
    return (
        f"note: {bots} bots have at most {fresh} round{'s' if fresh != 1 else ''} in which no two of them "
        f"share a {tables} again: {later} opponents already met (a round robin with more --games plays "
        "each pairing evenly instead)"
    )


def _seeds_line(t: Tournament) -> str:
    """How a knockout seeded by rating was seeded: each seed with its rating (or unrated)."""
    config = json.loads(t.config or "{}")
    bots = config.get("bots", [])
    options = config.get("format_options", {})
    order, ratings = options.get("order", []), options.get("ratings", [])
    if not any(r is not None for r in ratings):
        return (
            "note: no bot has a rating yet (no finished tournament match: see 'arena leaderboard'), "
            "so the seeds follow the order given"
        )
    seeds = ", ".join(
        f"{k}. {bots[i]} " + (f"{ratings[i]:.0f}" if ratings[i] is not None else "(unrated)")
        for k, i in enumerate(order, 1)
    )
    return f"seeded by rating (pl, every finished match): {seeds}"


def _where(jobs: int | None, cluster: str | None, local_cluster: int | None, pin: bool | None = None) -> None:
    if pin is not None and cluster:
        flag = "--pin" if pin else "--no-pin"
        raise typer.BadParameter(
            "pinning is for workers on this machine (--jobs, --local-cluster), not a remote cluster's",
            param_hint=flag,
        )
    given = [
        name
        for name, v in (("--jobs", jobs), ("--cluster", cluster), ("--local-cluster", local_cluster))
        if v
    ]
    if len(given) > 1:
        raise typer.BadParameter(f"use only one of {', '.join(given)}", param_hint=given[1])


def _waiting(tournament_id: int) -> Callable[[LeaseHolder], None]:
    def told(holder: LeaseHolder) -> None:
        typer.echo(f"waiting for tournament {tournament_id}, which is run by {holder.describe()}", err=True)

    return told


def _final_table(db: Database, tournament_id: int) -> tuple[dict[str, int], list[LeaderRow]]:
    """The match counts and the leaderboard at the end of a run (the ratings stored in the
    history), read again should the database drop the connection on the way (:func:`retried`);
    a database still failing after that is a clear error, not a traceback: the results are
    stored, only the table was not shown."""
    try:
        counts = retried(lambda: status_counts(db, tournament_id))
        rows = retried(lambda: leaderboard(db, tournament_id=tournament_id, system="pl"))
        retried(
            lambda: store_ratings(db, rows, "pl", f"tournament:{tournament_id}", tournament_id=tournament_id)
        )
    except SQLAlchemyError as exc:
        raise fail(
            f"tournament {tournament_id}: its matches are stored, but reading its leaderboard from the "
            f"database failed: {failure_line(exc)}. When the database is reachable again, 'arena tournament "
            f"resume {tournament_id}' prints the table (and plays anything left)."
        ) from None
    return counts, rows


def _run(
    db: Database,
    tournament_id: int,
    jobs: int | None,
    cluster: str | None = None,
    local_cluster: int | None = None,
    wait: bool = False,
    pin: bool | None = None,
) -> None:
    t = get_tournament(db, tournament_id)
    if t.format in CONTINUOUS:  # the ladder's own tournament (or one made with --format ladder before)
        raise fail(
            f"tournament {tournament_id} ({t.name}) is a {t.format}: it never finishes, so it is not run "
            f"as a tournament; run the ladder with 'arena ladder run'"
        )
    check_entry_files(db, tournament_id, sample_bots().get)  # a stored file gone: say so, play nothing
    on_wait = _waiting(tournament_id)
    at_start = status_counts(db, tournament_id)  # so the display shows done/total from the start
    if t.status == "finished" and set(at_start) <= {"finished"}:
        typer.echo(
            f"tournament {tournament_id} ({t.name}) has finished already: its {sum(at_start.values())} "
            f"matches are played, nothing is left to run. Its standings follow; a new tournament: "
            f"'arena tournament create BOT BOT ...' prints the id to start.",
            err=True,
        )
    display_at = TournamentDisplay(
        f"tournament {tournament_id}",
        total=max(sum(at_start.values()), planned_total(db, tournament_id) or 0),
        done=at_start.get("finished", 0),
    )
    try:
        again = f"'arena tournament resume {tournament_id}' plays what is left"
        with StopSignals(hint=again), display_at as display:
            if cluster is not None or local_cluster is not None:
                from arena.tournament.cluster import local_cluster as start_local
                from arena.tournament.cluster import run_tournament_on_cluster

                if cluster is not None:
                    run_tournament_on_cluster(
                        db, tournament_id, cluster, progress=display, wait=wait, on_wait=on_wait
                    )
                else:
                    assert local_cluster is not None
                    with start_local(local_cluster, pin) as client:
                        run_tournament_on_cluster(
                            db, tournament_id, client, progress=display, wait=wait, on_wait=on_wait
                        )
            else:
                run_tournament(
                    db,
                    tournament_id,
                    jobs=jobs or default_jobs(),
                    progress=display,
                    wait=wait,
                    on_wait=on_wait,
                    pin=pin,
                )
    except Stopped as stop:
        raise fail(stopped_message(db, tournament_id, stop), exit_status(stop.signum)) from None
    except KeyboardInterrupt:  # a Ctrl-C with no StopSignals in charge (it restores on exit)
        raise fail(f"interrupted; resume with 'arena tournament resume {tournament_id}'", 130) from None
    counts, rows = _final_table(db, tournament_id)
    make_console().print(render(rows, "pl", f"Tournament {tournament_id}: {t.name}"))
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    typer.echo(f"matches: {summary}. Replays: 'arena replays list --tournament {tournament_id}'.", err=True)
    for line in forfeit_notes(db, tournament_id, rows):
        typer.echo(line, err=True)


def forfeit_notes(db: Database, tournament_id: int, rows: list[LeaderRow]) -> list[str]:
    """One line per bot that forfeited: how often, and the first forfeit's reason and detail (a
    crashing bot file is otherwise only a count in the table), with where to read more."""
    lossy = [r for r in rows if r.forfeits]
    if not lossy:
        return []
    try:
        first = retried(lambda: first_forfeits(db, tournament_id))
    except SQLAlchemyError:  # the table is out; the details are one 'arena replays show' away
        return []
    logs = arena_home() / "logs" / f"tournament-{tournament_id}"
    where = f"; the bots' logs: {logs}/" if logs.is_dir() else ""
    out = []
    for r in lossy:
        found = first.get(r.bot)
        if found is None:
            continue
        mid, detail = found
        detail = " ".join(detail.split())
        if len(detail) > 200:
            detail = detail[:199] + "…"
        out.append(
            f"note: {r.bot} forfeited {r.forfeits} of {r.games} games; the first (match {mid}, "
            f"'arena replays show {mid}'): {detail}{where}"
        )
    return out


@app.command("run")
def run(
    bots: BotsArg,
    fmt: FormatOpt = "round-robin",
    tables: TablesOpt = "2",
    games: GamesOpt = 2,
    seed: SeedOpt = None,
    move_time: MoveOpt = 1.0,
    bank: BankOpt = 10.0,
    jobs: JobsOpt = None,
    pin: PinOpt = None,
    cluster: ClusterOpt = None,
    local_cluster: LocalClusterOpt = None,
    candidate: CandOpt = None,
    name: NameOpt = None,
    no_sandbox: NoSandboxOpt = False,
    cpu_time: CpuClockOpt = False,
    memory_mb: MemOpt = 1024,
    max_processes: ProcsOpt = 64,
    cpu_seconds: CpuSecOpt = 3600,
    rules: RulesOpt = None,
    rounds: RoundsOpt = None,
    seeding: SeedingOpt = "order",
) -> None:
    """Create a tournament and run it to the end, then print its leaderboard."""
    _where(jobs, cluster, local_cluster, pin)
    refuse_unknown_bots(bots)
    if cluster is not None:  # before the tournament is created: an unreachable one leaves nothing
        from arena.tournament.cluster import ClusterUnavailableError, check_scheduler

        try:
            check_scheduler(cluster)
        except ClusterUnavailableError as exc:
            raise fail(str(exc), 1) from None
    with database() as db:
        limits = SandboxLimits(cpu_seconds=cpu_seconds, memory_mb=memory_mb, processes=max_processes)
        sandbox = sandbox_choice(no_sandbox, limits)
        tid = _create(
            db, bots, fmt, tables, games, seed, move_time, bank, candidate, name, sandbox, cpu_time, rules,
            rounds, seeding,
        )  # fmt: skip
        _run(db, tid, jobs, cluster, local_cluster, pin=pin)


@app.command("create")
def create_(
    bots: BotsArg,
    fmt: FormatOpt = "round-robin",
    tables: TablesOpt = "2",
    games: GamesOpt = 2,
    seed: SeedOpt = None,
    move_time: MoveOpt = 1.0,
    bank: BankOpt = 10.0,
    candidate: CandOpt = None,
    name: NameOpt = None,
    no_sandbox: NoSandboxOpt = False,
    cpu_time: CpuClockOpt = False,
    memory_mb: MemOpt = 1024,
    max_processes: ProcsOpt = 64,
    cpu_seconds: CpuSecOpt = 3600,
    rules: RulesOpt = None,
    rounds: RoundsOpt = None,
    seeding: SeedingOpt = "order",
) -> None:
    """Create a tournament (its first matches queued: all of them for round robin and gauntlet,
    round 1 for Swiss and knockout) and print its id; start it with 'start ID'."""
    refuse_unknown_bots(bots)
    with database() as db:
        limits = SandboxLimits(cpu_seconds=cpu_seconds, memory_mb=memory_mb, processes=max_processes)
        sandbox = sandbox_choice(no_sandbox, limits)
        tid = _create(
            db, bots, fmt, tables, games, seed, move_time, bank, candidate, name, sandbox, cpu_time, rules,
            rounds, seeding,
        )  # fmt: skip
    typer.echo(tid)


@app.command("start")
def start(
    tournament_id: Annotated[int, typer.Argument(metavar="ID", help="tournament id")],
    jobs: JobsOpt = None,
    pin: PinOpt = None,
    cluster: ClusterOpt = None,
    local_cluster: LocalClusterOpt = None,
    wait: WaitOpt = False,
) -> None:
    """Run a created tournament's queued matches."""
    _where(jobs, cluster, local_cluster, pin)
    with database(existing=True) as db:
        _run(db, tournament_id, jobs, cluster, local_cluster, wait, pin)


@app.command("resume")
def resume(
    tournament_id: Annotated[int, typer.Argument(metavar="ID", help="tournament id")],
    jobs: JobsOpt = None,
    pin: PinOpt = None,
    cluster: ClusterOpt = None,
    local_cluster: LocalClusterOpt = None,
    wait: WaitOpt = False,
) -> None:
    """Finish an interrupted tournament: unfinished matches are played, finished ones kept."""
    _where(jobs, cluster, local_cluster, pin)
    with database(existing=True) as db:
        _run(db, tournament_id, jobs, cluster, local_cluster, wait, pin)


@app.command("list")
def list_() -> None:
    """List tournaments, newest first."""
    with database(readonly=True) as db:
        items = list_tournaments(db)
        live = coordinated(db, [t.id for t, _ in items if t.id is not None and t.status == "running"])
    if not items:
        typer.echo("no tournaments yet; start one with 'arena tournament run BOT BOT ...'")
        return
    table = Table(title="tournaments")
    for col in (
        "id",
        "name",
        "format",
        "tables",
        "status",
        "finished",
        "queued",
        "running",
        "failed",
        "created",
    ):
        table.add_column(col)
    for t, c in items:
        table.add_row(
            str(t.id),
            t.name,
            t.format,
            t.table_sizes,
            shown_status(t.status, t.id in live),
            str(c.get("finished", 0)),
            str(c.get("queued", 0)),
            str(c.get("running", 0)),
            str(c.get("failed", 0)),
            f"{t.created_at:%Y-%m-%d %H:%M}",
        )
    make_console().print(table)


@app.command("show")
def show(tournament_id: Annotated[int, typer.Argument(metavar="ID", help="tournament id")]) -> None:
    """Show a tournament's settings, progress and standings."""
    with database(readonly=True) as db:
        t = get_tournament(db, tournament_id)
        counts = status_counts(db, tournament_id)
        rows = leaderboard(db, tournament_id=tournament_id)
        state = tournament_state(tournament_id, t.status, counts, lease_holder(db, tournament_id), t.format)
        cross = cross_table(db, tournament_id, ranked_versions(db, tournament_id))
        standing = format_report(db, tournament_id)
        planned = planned_total(db, tournament_id) or 0
    stored = sum(counts.values())
    later = ""
    if planned > stored and t.format in ROUND_BY_ROUND:
        later = f" ({planned - stored} more in later rounds, {planned} in all)"
    elif planned > stored:  # a fixed schedule not stored yet (a run killed before it was)
        later = (
            f" ({planned - stored} not stored yet, {planned} in all: "
            f"'arena tournament start {t.id}' stores and plays them)"
        )
    typer.echo(
        f"tournament {t.id}: {t.name}\n  format {t.format}, tables of {t.table_sizes}, {t.games} seed(s) per "
        f"table, seed {t.seed}, {time_control_text(t)}, rules {rules_label(t.rules)}\n"
        f"  status {state}; matches " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + later
    )
    if rows:
        make_console().print(render(rows, "pl", "standings"))
    if cross.byes:
        typer.echo(f"  byes: {cross.byes_text}")
    for line in standing:
        typer.echo(f"  {line}")
    if not cross.empty:
        make_console().print(_cross_table(cross))
        # the key on a line of its own: as the table's title it wrapped to the table's width
        typer.echo(f"  {CROSS_KEY}")


CROSS_KEY = "head to head: row against column, 1 per better place, ½ per shared one; points/meetings"


def _cross_table(cross: CrossTable) -> Table:
    """The head-to-head cross table: row against column, points/meetings."""
    table = Table(title="head to head")
    table.add_column("")
    for i in range(len(cross.names)):
        table.add_column(str(i + 1), justify="right")
    table.add_column("total", justify="right")
    for i, (name, cells, total) in enumerate(zip(cross.names, cross.cells, cross.totals, strict=True)):
        table.add_row(f"{i + 1} {name}", *(c.text if c else "·" for c in cells), total.text)
    return table
