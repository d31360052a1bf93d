"""``arena engine``: play, show and verify game records without a referee."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.engine import ReplayError, make_policy, play_game, render, replay
from arena.engine.chance import SEED_LIMIT
from arena.engine.policies import POLICIES
from arena.engine.record import Replay
from arena.engine.render import LEGEND
from arena.outpaths import output_problem, write_problem

from .common import refuse_path
from .recordfile import RecordFileTooLarge, read_record_text
from .rules_option import RULES_HELP, parse_rules

app = typer.Typer(help="Play, show and verify games with the rules engine alone.", no_args_is_help=True)


def _policy_names(value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    for name in names:
        if name not in POLICIES:
            raise typer.BadParameter(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}")
    return names


@app.command()
def play(
    players: Annotated[int, typer.Option("--players", "-n", min=2, max=4, help="2, 3 or 4")] = 4,
    seed: Annotated[int, typer.Option(min=0, max=SEED_LIMIT - 1, help="match seed (dice stream)")] = 1,
    policy: Annotated[
        str, typer.Option(help="random or greedy, or one per seat: greedy,random,...")
    ] = "greedy",
    out: Annotated[Path | None, typer.Option(help="write the game record here (default: stdout)")] = None,
    show: Annotated[bool, typer.Option(help="print the final board and result to stderr")] = False,
    rules: Annotated[str | None, typer.Option(help=RULES_HELP)] = None,
) -> None:
    """Play one game with built-in policies and write its game record (JSON Lines).

    --out creates missing folders; a path that cannot be written is refused before the game."""
    chosen = parse_rules(rules)
    names = _policy_names(policy)
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise typer.BadParameter(f"give one policy or exactly {players}, got {len(names)}")
    if out is not None:
        refuse_path(out, output_problem(out))
    game = play_game(seed, [make_policy(n, seed, s) for s, n in enumerate(names)], rules=chosen)
    failed = None if out is None else write_problem(out, game.record)
    if out is None or failed is not None:
        sys.stdout.write(game.record)  # the record is not lost
        sys.stdout.flush()
    else:
        typer.echo(f"wrote {out}", err=True)
    if show:
        typer.echo(render(game.final, color=sys.stderr.isatty()), err=True)
        typer.echo(_result_line(game.outcome.scores, game.outcome.placings, names), err=True)
    if failed is not None:
        typer.echo(
            f"error: cannot write {out}: {failed}; the record went to standard output instead", err=True
        )
        raise typer.Exit(1)


def _result_line(scores: tuple[int, ...], placings: tuple[int, ...], names: list[str]) -> str:
    parts = [f"seat {s} ({names[s]}): {scores[s]} points, place {placings[s]}" for s in range(len(scores))]
    return "result: " + "; ".join(parts)


def _load(path: Path) -> Replay:
    try:
        text = read_record_text(path)
    except OSError as exc:
        typer.echo(f"error: cannot read {path}: {exc.strerror}", err=True)
        raise typer.Exit(2) from None
    except RecordFileTooLarge as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None  # bad data, as for any other damaged record
    except UnicodeDecodeError:
        typer.echo(f"error: {path} is not UTF-8 text; is it a game record?", err=True)
        raise typer.Exit(1) from None  # bad data, as for any other damaged record
    try:
        return replay(text)
    except ReplayError as exc:
        typer.echo(f"error: {path}: {exc}", err=True)
        raise typer.Exit(1) from None


@app.command()
def verify(
    files: Annotated[list[Path], typer.Argument(metavar="FILE", help="game records (.jsonl)")],
) -> None:
    """Replay game records through the engine: OK, or exactly where each one breaks.

    Every file is checked, in the order given; the exit status is the worst one's (1: a record
    that does not replay, 2: a file that cannot be read)."""
    worst = 0
    for file in files:
        try:
            rep = _load(file)
        except typer.Exit as exc:  # _load has said what is wrong with this one; go on with the rest
            worst = max(worst, exc.exit_code)
            continue
        n = len(rep.events)
        typer.echo(
            f"OK {file}: {n} events replay exactly under rules {rep.rules.version} ({rep.rules.variant}); "
            f"result {rep.result.get('scores')} ({rep.result.get('termination')})"
        )
    if worst:
        raise typer.Exit(worst)


@app.command(epilog=escape(LEGEND))
def show(
    file: Annotated[Path | None, typer.Argument(metavar="FILE", help="a game record (.jsonl)")] = None,
    step: Annotated[int | None, typer.Option(help="show only the board after event N (0 = start)")] = None,
    every: Annotated[bool, typer.Option(help="board after every event, not only after actions")] = False,
    color: Annotated[bool | None, typer.Option(help="ANSI colours (default: when a terminal)")] = None,
    legend: Annotated[
        bool, typer.Option("--legend", help="print how to read the board first (alone: without FILE)")
    ] = False,
) -> None:
    """Render a game record step by step: each decision with the board after it."""
    if legend:
        typer.echo(LEGEND + "\n")
    if file is None:
        if legend:
            return
        raise typer.BadParameter("give a game record FILE (or --legend alone for how to read the board)")
    rep = _load(file)
    use_color = sys.stdout.isatty() if color is None else color
    if step is not None:
        if not 0 <= step < len(rep.states):
            typer.echo(f"error: --step must be 0..{len(rep.states) - 1}", err=True)
            raise typer.Exit(2)
        typer.echo(render(rep.states[step], color=use_color))
        return
    typer.echo(render(rep.states[0], color=use_color))
    for k, event in enumerate(rep.events, start=1):
        state = rep.states[k]
        if "throw" in event:
            typer.echo(f"#{k} {event['throw']}")
            if every:
                typer.echo(render(state, color=use_color))
            continue
        forced = " (forced)" if event.get("forced") else ""
        typer.echo(f"#{k} seat {event['seat']}: {event['action']}{forced}")
        before = rep.states[k - 1]
        if (
            every
            or event["action"].split(" ")[0] not in ("keep", "chip", "place")
            or (
                before.phase != state.phase
                and state.phase.label in ("throw", "over")
                and event["action"] != "stop"
            )
        ):
            typer.echo(render(state, color=use_color))
    typer.echo(
        f"result: scores {rep.result['scores']}, placings {rep.result['placings']}, "
        f"termination {rep.result['termination']}"
    )
