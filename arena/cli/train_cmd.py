"""``arena train``: train the learned evaluation by self-play (arena/strength/train.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from .common import fail


def train(
    games: Annotated[
        int, typer.Option(min=1, help="self-play games in all (a resumed run continues to it)")
    ] = 20_000,
    seed: Annotated[
        int, typer.Option(help="the run's seed: the same seed and options give the same weights")
    ] = 1,
    out: Annotated[Path, typer.Option(help="write the trained weights here (.npz)")] = Path("value.npz"),
    checkpoint: Annotated[
        Path | None,
        typer.Option(help="checkpoint file (default: OUT with .ckpt.npz); a rerun resumes from it"),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="ignore an existing checkpoint and start anew")
    ] = False,
    curve: Annotated[
        Path | None, typer.Option(help="write the learning curve as SVG here (default: OUT with .svg)")
    ] = None,
    chunk: Annotated[int, typer.Option(min=1, help="games per chunk (play, then learn)")] = 500,
    steps: Annotated[int, typer.Option(min=1, help="Adam steps per chunk")] = 300,
    hidden: Annotated[int, typer.Option(min=1, help="hidden units of the network")] = 32,
    lr: Annotated[float, typer.Option(min=1e-6, help="Adam's step size")] = 0.002,
    heldout: Annotated[int, typer.Option(min=1, help="held-out games for the learning curve")] = 400,
    epsilon: Annotated[float, typer.Option(min=0.0, max=1.0, help="exploration: random action share")] = 0.1,
    policy: Annotated[
        str, typer.Option(help="who plays: greedy (fast) or self (the network picks lounger actions)")
    ] = "greedy",
    players: Annotated[str, typer.Option(help="table sizes, in turn, e.g. 2,3,4")] = "2,3,4",
    checkpoint_every: Annotated[
        float, typer.Option(min=0.0, help="seconds between checkpoints (0: after every chunk)")
    ] = 30.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress output")] = False,
) -> None:
    """Train the learned evaluation by self-play (reproducible, resumable, plots its learning curve).

    Monte-Carlo regression of the value network on final margins.  The same --seed and options
    give the same weights; kill it and rerun the same command and it continues from the
    checkpoint.  Writes the weights (--out) and the learning curve as SVG (--curve).  Ship new
    weights by writing them to arena/strength/weights/value-v1.npz."""
    from arena.lifecycle import StopSignals, exit_status
    from arena.strength.train import (
        CheckpointDamagedError,
        TrainConfig,
        TrainError,
        TrainingStopped,
        TrainProgress,
        curve_svg,
        write_weights,
    )
    from arena.termui import StatusLine

    try:
        sizes = tuple(int(p) for p in players.split(","))
    except ValueError:
        raise typer.BadParameter(
            f"expected numbers like 2,3,4, got {players!r}", param_hint="--players"
        ) from None
    if games % chunk:  # training runs in whole chunks: said, and the count shown is the one played
        whole = -(-games // chunk) * chunk
        typer.echo(f"--games {games} rounded up to {whole}: training plays whole chunks of {chunk}", err=True)
        games = whole
    config = TrainConfig(
        seed=seed,
        games=games,
        chunk=chunk,
        hidden=hidden,
        lr=lr,
        steps=steps,
        heldout=heldout,
        epsilon=epsilon,
        policy=policy,
        players=sizes,
    )
    ckpt = checkpoint if checkpoint is not None else out.with_name(out.stem + ".ckpt.npz")
    svg = curve if curve is not None else out.with_suffix(".svg")
    status = StatusLine(quiet)
    started = time.monotonic()

    def show(p: TrainProgress) -> None:
        width = 30
        filled = int(width * p.games / p.total)
        rate = p.games / p.elapsed if p.elapsed else 0.0
        eta = (p.total - p.games) / rate if rate else 0.0
        status.write(
            f"[{'#' * filled}{'.' * (width - filled)}] {p.games}/{p.total} games  "
            f"held-out RMSE {p.heldout_rmse:.3f} pts  {rate:.0f} games/s  ETA {eta / 60:.1f} min"
        )

    from arena.strength.train import train as run_training

    try:
        with StopSignals(hint="the same command goes on from the last checkpoint written"):
            result = run_training(config, ckpt, fresh=fresh, checkpoint_every=checkpoint_every, progress=show)
    except TrainError as exc:  # a usage error (2); a damaged checkpoint is a data error (1)
        status.close()
        raise fail(str(exc), 1 if isinstance(exc, CheckpointDamagedError) else 2) from None
    except TrainingStopped as stop:  # Ctrl-C, SIGTERM, SIGHUP: the whole chunks are kept
        status.close()
        if stop.checkpoint is None:
            kept = "no chunk had finished: nothing was saved"
        else:
            kept = f"checkpoint {stop.checkpoint} holds them: the same command goes on from there"
        raise fail(
            f"{stop.how()} after {stop.games} of {games} games; {kept}", exit_status(stop.signum)
        ) from None
    status.close()
    write_weights(result, out)
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(curve_svg(result.curve), encoding="utf-8")
    c = result.curve
    last = c.heldout_rmse[-1] if c.heldout_rmse else float("nan")
    resumed = f", resumed at {result.resumed_from} games" if result.resumed_from else ""
    print(
        f"trained {c.games[-1] if c.games else 0} games in {result.elapsed:.1f} s of training{resumed} "
        f"(this call {time.monotonic() - started:.1f} s); held-out RMSE {last:.3f} points "
        f"(predict 0: {c.zero_rmse:.3f}, predict the score margin now: {c.board_rmse:.3f})",
        file=sys.stderr,
    )
    print(f"wrote {out}, {svg}; checkpoint {ckpt}", file=sys.stderr)
