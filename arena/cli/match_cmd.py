"""``arena match``: run one match between bots and show the result."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arena.engine.chance import SEED_LIMIT
from arena.matchrunner import BotSpec, play_local_match, resolve_bot, sandbox_choice
from arena.referee import MatchResult, TimeControl
from arena.referee.match import Match
from arena.sandbox import BotLaunchError, SandboxUnavailableError
from arena.termui import StatusLine, make_console


def match(
    bots: Annotated[list[str], typer.Argument(help="2-4 bots: script/executable paths or sample names")],
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_LIMIT - 1, help="match seed (default: random)")
    ] = None,
    move_time: Annotated[float, typer.Option(min=0.001, help="seconds per decision")] = 1.0,
    bank: Annotated[float, typer.Option(min=0.0, help="overage bank in seconds")] = 10.0,
    unlimited: Annotated[bool, typer.Option(help="no time limits (debugging)")] = False,
    out: Annotated[Path | None, typer.Option(help="replay file (default: replays/<match id>.jsonl)")] = None,
    logs: Annotated[Path, typer.Option(help="directory for the bots' stdout/stderr logs")] = Path("logs"),
    quiet: Annotated[bool, typer.Option(help="no progress, only the result")] = False,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="run the bots unsandboxed (only bots you trust)")
    ] = False,
    cpu_time: Annotated[
        bool, typer.Option("--cpu-time", help="charge bots their CPU time instead of wall-clock time")
    ] = False,
) -> None:
    """Run one match between 2-4 bots launched as processes; show progress and the result."""
    if not 2 <= len(bots) <= 4:
        raise typer.BadParameter(f"a match needs 2 to 4 bots, got {len(bots)}", param_hint="BOTS")
    try:
        specs = [resolve_bot(b) for b in bots]
    except BotLaunchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    specs = _unique_names(specs)
    seed = random.randrange(SEED_LIMIT) if seed is None else seed
    control = TimeControl(unlimited=True) if unlimited else TimeControl(move_time, bank, cpu=cpu_time)
    sandbox = sandbox_choice(no_sandbox)
    console = make_console(stderr=True)
    match_id = f"m{seed % 10**8:08d}-{random.randrange(16**4):04x}"
    console.print(
        f"match {match_id}: {' vs '.join(s.name for s in specs)}  seed {seed}  {control.describe()}"
    )
    progress = _Progress(console, quiet)
    try:
        result = asyncio.run(
            play_local_match(
                specs, seed, control, match_id=match_id, log_dir=logs, on_event=progress, sandbox=sandbox
            )
        )
    except (BotLaunchError, SandboxUnavailableError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    progress.close()
    path = out or Path("replays") / f"{match_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.replay, encoding="utf-8")
    make_console().print(result_table(result))
    for f in result.forfeits:
        console.print(f"seat {f.seat} forfeited: {f.reason}: {f.detail}")
    console.print(f"replay: {path}   bot logs: {logs}/")


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


def result_table(result: MatchResult) -> Table:
    """The match result as a table: one row per seat, best first."""
    table = Table(title=f"match {result.match_id} ({result.termination}, {result.duration:.1f}s)")
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
            s.termination,
            str(s.decisions),
            f"{s.think_total:.3f}s",
            f"{s.think_max * 1000:.1f}ms",
            "-" if s.cpu_time is None else f"{s.cpu_time:.3f}s",
        )
    return table
