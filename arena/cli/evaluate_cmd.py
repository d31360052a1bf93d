"""``arena evaluate``: how much stronger is one bot than another?  Duplicate dice, real bots.

::

    arena evaluate bots/search_bot.py --vs greedy --players 4 --games 400 --move-time 0.2

Plays the same match seeds under every seating (2 players: both seatings; 3-4 players: the
candidate against ``players - 1`` baselines, in every seat once), with the bots running as real
processes kept alive across matches (sandboxed unless ``--no-sandbox``; ``--cpu-time`` charges
them CPU time instead of wall-clock time), ``--jobs`` matches at a time.  Reports the candidate's
pairwise share (ties count half), the mean score difference, and the Elo difference, each with a
95 % interval, and runs a sequential test (GSPRT of ``--elo0`` against ``--elo1``) that stops the
run early once the answer is clear (``--no-sequential`` plays every game).  The statistics are
described in :mod:`arena.evaluation`.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from arena.botref import resolve_for_reading
from arena.engine.chance import SEED_LIMIT
from arena.evaluate_runner import EvaluationPlan, EvaluationReport, Progress, run_evaluation
from arena.evaluation import MIN_SEQUENTIAL_GROUPS, Percentiles, SprtConfig
from arena.hosting import BotSpec, sandbox_choice
from arena.outpaths import folder_problem
from arena.referee import TimeControl
from arena.referee.timecontrol import MAX_BANK, MAX_MOVE_TIME
from arena.sandbox import BotLaunchError, SandboxUnavailableError
from arena.seeds import secret_seed
from arena.termui import StatusLine, make_console

from .common import DEFAULT_LOGS_ADVICE, FORFEIT_EXIT, MAX_JOBS, refuse_path
from .interrupt import run_interruptible


def evaluate(
    candidate: Annotated[
        str,
        typer.Argument(
            metavar="CANDIDATE",
            help="the bot to measure: a path, a registered bot (NAME or NAME@N) or a sample name",
        ),
    ],
    vs: Annotated[
        str, typer.Option("--vs", help="the baseline bot: a path, a registered bot or a sample name")
    ],
    players: Annotated[
        int, typer.Option(min=2, max=4, help="2: both seatings; 3-4: one candidate vs the rest")
    ] = 2,
    games: Annotated[
        int,
        typer.Option(
            min=1,
            help="games to play, rounded up to whole duplicate groups (a group: one game per seating)",
        ),
    ] = 200,
    move_time: Annotated[
        float, typer.Option(min=0.001, max=MAX_MOVE_TIME, help="seconds per decision")
    ] = 0.2,
    bank: Annotated[float, typer.Option(min=0.0, max=MAX_BANK, help="overage bank per match, seconds")] = 5.0,
    jobs: Annotated[int, typer.Option(min=1, max=MAX_JOBS, help="matches played in parallel")] = 2,
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="first match seed (default: random)")
    ] = None,
    sequential: Annotated[bool, typer.Option(help="stop early when the sequential test decides")] = True,
    elo0: Annotated[float, typer.Option(help="sequential test: Elo under H0")] = 0.0,
    elo1: Annotated[float, typer.Option(help="sequential test: Elo under H1")] = 150.0,
    alpha: Annotated[float, typer.Option(min=0.001, max=0.49, help="sequential test: false H1 rate")] = 0.05,
    beta: Annotated[float, typer.Option(min=0.001, max=0.49, help="sequential test: false H0 rate")] = 0.05,
    json_out: Annotated[bool, typer.Option("--json", help="print the summary as JSON on stdout")] = False,
    logs: Annotated[
        Path | None,
        typer.Option(help="directory for the bots' stdout/stderr logs (default: ARENA_HOME/logs/evaluate/)"),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="no progress line")] = False,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run the bots unsandboxed (only bots you trust)")
    ] = False,
    cpu_time: Annotated[
        bool, typer.Option("--cpu-time", help="charge bots their CPU time instead of wall-clock time")
    ] = False,
) -> None:
    """Measure CANDIDATE against the baseline with duplicate dice; report share, score and Elo."""
    from arena.store.db import StoreError

    try:
        cand, base = (BotSpec(r.name, r.command) for r in resolve_for_reading([candidate, vs]))
    except (BotLaunchError, StoreError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if cand.name == base.name:
        cand = BotSpec(f"{cand.name}(candidate)", cand.command)
    for value, name in ((elo0, "--elo0"), (elo1, "--elo1")):
        if not math.isfinite(value):  # nan passed the check below and failed deep inside
            raise typer.BadParameter(f"{value} is not an Elo difference: give a number", param_hint=name)
    if elo1 <= elo0:
        raise typer.BadParameter("--elo1 must be larger than --elo0", param_hint="--elo1")
    seed = secret_seed() if seed is None else seed
    # a file there, or a folder that cannot be made: said now, not as a traceback
    if logs is not None:
        refuse_path(logs, folder_problem(logs))
    else:  # the default under ARENA_HOME: the user gave no path to change
        logs = default_log_dir(seed)
        refuse_path(logs.parent, folder_problem(logs.parent), DEFAULT_LOGS_ADVICE)
    plan = EvaluationPlan(
        candidate=cand,
        baseline=base,
        players=players,
        games=games,
        control=TimeControl(move_time, bank, cpu=cpu_time),
        jobs=jobs,
        seed=seed,
        sequential=SprtConfig(elo0, elo1, alpha, beta) if sequential else None,
        log_dir=logs,
        sandbox=sandbox_choice(no_sandbox),
    )
    console = make_console(stderr=True)
    console.print(
        f"evaluate {cand.name} vs {base.name}: {players} players, "
        f"up to {_count(plan.groups, 'duplicate group')} ({plan.groups * players} games"
        f"{f', --games {games} rounded up to whole groups' if plan.groups * players != games else ''}), "
        f"{plan.control.describe()}, {_count(jobs, 'job')}, seed {seed}, "
        f"{'sandboxed' if plan.sandbox is not None else 'NOT sandboxed'}"
    )
    line = _ProgressLine(quiet)
    partial: list[EvaluationReport] = []
    try:
        report = run_interruptible(run_evaluation(plan, progress=line, on_interrupt=partial.append))
    except (BotLaunchError, SandboxUnavailableError) as exc:
        line.close()
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except BaseException:  # a stop signal: the groups completed so far are printed, then its exit
        line.close()
        if partial:
            _print_report(partial[0], json_out)
        raise
    line.close()
    _print_report(report, json_out)
    if any(report.summary.forfeits.values()):  # as 'arena match': a script can tell a broken bot
        raise typer.Exit(FORFEIT_EXIT)


def _print_report(report: EvaluationReport, json_out: bool) -> None:
    if json_out:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        make_console().print(report_table(report))
        for text in report_notes(report):
            make_console().print(text)


class _ProgressLine(StatusLine):
    """One status line after every game."""

    def __call__(self, p: Progress) -> None:
        text = f"games {p.games}  groups {p.groups}/{p.planned_groups}"
        if p.share is not None and p.elo is not None:
            text += f"  share {p.share.estimate:.3f}  Elo {_elo(p.elo.estimate)}"
        if p.sprt is not None and p.sprt.groups:
            text += f"  LLR {p.sprt.llr:+.2f} (bounds {p.sprt.lower:+.2f} / {p.sprt.upper:+.2f})"
        self.write(text)


def _elo(x: float) -> str:
    return _signed(x, 0) if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def _signed(x: float, digits: int) -> str:
    """``x`` with its sign and ``digits`` decimals; what rounds to zero is ``+0`` (never ``-0``).

    >>> _signed(-0.3, 0), _signed(-0.0, 2), _signed(-0.004, 2), _signed(-1.5, 1)
    ('+0', '+0.00', '+0.00', '-1.5')
    """
    return f"{round(x, digits) + 0.0:+.{digits}f}"


def report_table(report: EvaluationReport) -> Table:
    """The summary as a table."""
    s = report.summary
    table = Table(title=f"{s.candidate} vs {s.baseline}, {s.players} players, duplicate dice")
    table.add_column("measure")
    table.add_column("estimate", justify="right")
    table.add_column("95% interval", justify="right")
    table.add_row(
        "pairwise share (ties 1/2)",
        f"{s.share.estimate:.3f}",
        f"[{s.share.low:.3f}, {s.share.high:.3f}]",
    )
    table.add_row("Elo difference", _elo(s.elo.estimate), f"[{_elo(s.elo.low)}, {_elo(s.elo.high)}]")
    table.add_row(
        "score difference (cand - mean base)",
        _signed(s.score_difference.estimate, 2),
        f"[{_signed(s.score_difference.low, 2)}, {_signed(s.score_difference.high, 2)}]",
    )
    table.add_row("groups / games / pairings", f"{s.groups} / {s.games} / {s.pairings}", "")
    table.add_row("candidate alone first / shared first", f"{s.wins} / {s.draws}", "")
    for side in ("candidate", "baseline"):
        t = report.timing[side]
        cpu = "" if t.cpu_mean is None else f" (cpu {t.cpu_mean * 1000:.1f} ms)"
        table.add_row(
            f"think per decision, {side}", f"mean {t.mean * 1000:.1f} ms{cpu}", f"max {t.max * 1000:.1f} ms"
        )
        for kind, p in t.percentiles().items():
            label = "wall clock" if kind == "wall" else "CPU"
            table.add_row(f"  {label} per decision, {side}", *_percentile_cells(p))
        table.add_row(f"  timeouts, {side}", str(t.timeouts), "")
    return table


def _percentile_cells(p: Percentiles | None) -> tuple[str, str]:
    if p is None:
        return "not measured", ""
    return f"p50 {p.p50 * 1000:.1f} ms  p99 {p.p99 * 1000:.1f} ms", f"max {p.max * 1000:.1f} ms (n={p.count})"


def default_log_dir(seed: int) -> Path:
    """Where a run's bot logs go unless ``--logs`` says: a folder of its own under
    ``<ARENA_HOME>/logs/evaluate/``, named by the start time and the seed."""
    from arena.store.db import arena_home

    return arena_home() / "logs" / "evaluate" / f"{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}"


def _count(n: int, thing: str) -> str:
    """``1 job``, ``2 jobs``."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def report_notes(report: EvaluationReport) -> list[str]:
    """The lines under the table: interval method, sequential test, forfeits, run length."""
    s = report.summary
    notes = [
        f"Elo interval: {s.elo_method}; the interval {'excludes' if s.significant else 'includes'} 0.",
    ]
    if s.sprt is not None and s.sprt_config is not None:
        c = s.sprt_config
        early = ""
        if s.sprt.groups < MIN_SEQUENTIAL_GROUPS:
            early = f" (it decides after at least {MIN_SEQUENTIAL_GROUPS} groups)"
        verdict = {
            "H1": f"accepted H1 (Elo = {c.elo1:+g} rather than {c.elo0:+g}): the candidate is stronger",
            "H0": f"accepted H0 (Elo = {c.elo0:+g} rather than {c.elo1:+g}): not shown stronger",
            "continue": "no decision yet" + early,
        }[s.sprt.decision]
        notes.append(
            f"sequential test (GSPRT, alpha={c.alpha:g}, beta={c.beta:g}): LLR {s.sprt.llr:+.2f} "
            f"(decides at {s.sprt.lower:+.2f} or {s.sprt.upper:+.2f}) "
            f"after {_count(s.sprt.groups, 'group')}: {verdict}"
        )
    if any(s.forfeits.values()):
        notes.append(f"forfeits: candidate {s.forfeits['candidate']}, baseline {s.forfeits['baseline']}")
        for side, reasons in report.forfeit_reasons.items():
            for r in reasons:
                notes.append(
                    f"  {side}: {r.count} x {r.reason}; the first (seed {r.seed}, seat {r.seat}): {r.detail}"
                )
        if report.plan.log_dir is not None:
            notes.append(f"  the bots' stdout and stderr: {report.plan.log_dir}/")
    notes.append(
        f"{s.games} games in {report.duration:.1f}s"
        + (" (stopped early by the sequential test)" if report.stopped_early else "")
        + (
            f" (interrupted: these are the {_count(s.groups, 'complete duplicate group')} of "
            f"{report.plan.groups} planned)"
            if report.interrupted
            else ""
        )
        + (f"; {_count(report.restarts, 'bot restart')}" if report.restarts else "")
        + f"; seeds {report.plan.seed}..{report.plan.seed + s.groups - 1}"
    )
    return notes
