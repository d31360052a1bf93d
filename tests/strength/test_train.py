"""Training by self-play: reproducible from the seed, a resumed run equals an uninterrupted one
(in process and with a real kill of 'arena train'), a checkpoint of other options refused, the
learning curve plotted, the weights loadable."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from arena.strength.train import Curve, TrainConfig, TrainError, curve_svg, train
from arena.strength.value import load

pytestmark = pytest.mark.timeout(300)

SMALL = TrainConfig(seed=5, games=60, chunk=20, hidden=8, steps=15, batch=64, buffer=5000, heldout=6)
ARENA = [sys.executable, "-m", "arena.cli.main"]


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_two_runs_from_one_seed_give_identical_weights(tmp_path: Path) -> None:
    one = train(SMALL, tmp_path / "a.ckpt.npz", checkpoint_every=0)
    two = train(SMALL, tmp_path / "b.ckpt.npz", checkpoint_every=0)
    assert _same(one.network.arrays(), two.network.arrays())
    assert one.curve.heldout_rmse == two.curve.heldout_rmse
    assert one.curve.games == [20, 40, 60]
    other = train(TrainConfig(**{**SMALL.__dict__, "seed": 6}), None)
    assert not _same(one.network.arrays(), other.network.arrays())


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    whole = train(SMALL, tmp_path / "whole.npz", checkpoint_every=0)
    ckpt = tmp_path / "parts.npz"
    first = train(SMALL, ckpt, checkpoint_every=0, stop_after=1)  # "interrupted" after one chunk
    assert first.curve.games == [20]
    rest = train(SMALL, ckpt, checkpoint_every=0)
    assert rest.resumed_from == 20
    assert _same(whole.network.arrays(), rest.network.arrays())
    assert rest.curve.games == whole.curve.games
    assert rest.curve.heldout_rmse == whole.curve.heldout_rmse
    # more games later continue the same run
    longer = train(TrainConfig(**{**SMALL.__dict__, "games": 80}), ckpt, checkpoint_every=0)
    assert longer.resumed_from == 60 and longer.curve.games[-1] == 80


def test_a_checkpoint_of_other_options_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "c.npz"
    train(SMALL, ckpt, checkpoint_every=0, stop_after=1)
    with pytest.raises(TrainError, match=r"other options \(hidden, lr differ\).*--fresh"):
        train(TrainConfig(**{**SMALL.__dict__, "hidden": 9, "lr": 0.01}), ckpt)
    fresh = train(TrainConfig(**{**SMALL.__dict__, "hidden": 9, "games": 20}), ckpt, fresh=True)
    assert fresh.resumed_from == 0
    with pytest.raises(TrainError, match="unknown policy"):
        train(TrainConfig(policy="best"), None)


def test_self_play_policy_trains(tmp_path: Path) -> None:
    cfg = TrainConfig(**{**SMALL.__dict__, "policy": "self", "games": 40})
    one = train(cfg, None)
    assert _same(one.network.arrays(), train(cfg, None).network.arrays())


def test_curve_svg_plots_every_point() -> None:
    curve = Curve([100, 200, 300], [6.0, 5.5, 5.2], [6.5, 5.9, 5.4], [1.0, 2.0, 3.0], 7.0, 5.6)
    svg = curve_svg(curve)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    points = svg.split('class="heldout" points="')[1].split('"')[0].split()
    assert len(points) == 3
    assert "predict the score margin now: 5.60" in svg and "value network: 5.20" in svg


def _cli(args: list[str], tmp_path: Path) -> list[str]:
    return [*ARENA, "train", *args, "--seed", "3", "--chunk", "10", "--steps", "10", "--hidden", "8",
            "--heldout", "4", "--checkpoint-every", "0", "--players", "2,4"]  # fmt: skip


def test_arena_train_killed_and_rerun_continues_to_the_same_weights(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    whole = tmp_path / "whole.npz"
    done = subprocess.run(
        _cli(["--games", "60", "--out", str(whole)], tmp_path),
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert "trained 60 games" in done.stderr and "held-out RMSE" in done.stderr
    assert (tmp_path / "whole.svg").read_text().startswith("<svg")
    # the same run, killed (SIGKILL: no chance to clean up) once its first checkpoint is written
    out = tmp_path / "killed.npz"
    ckpt = tmp_path / "killed.ckpt.npz"
    proc = subprocess.Popen(
        _cli(["--games", "60", "--out", str(out)], tmp_path), stderr=subprocess.PIPE, text=True, env=env
    )
    deadline = time.monotonic() + 200
    while not ckpt.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()
    assert ckpt.exists() and not out.exists()
    rerun = subprocess.run(
        _cli(["--games", "60", "--out", str(out)], tmp_path),
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert "resumed at" in rerun.stderr
    assert _same(load(whole).network.arrays(), load(out).network.arrays())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_arena_train_stopped_by_a_signal_keeps_its_whole_chunks(tmp_path: Path, sig: signal.Signals) -> None:
    """Ctrl-C (or SIGTERM) in the middle of training: the chunk in progress is dropped, the whole
    ones are written to the checkpoint (here no periodic checkpoint was due), one line says how
    many and where, the status is 128 + the signal; the same command then goes on to the weights
    of an uninterrupted run.  (It used to end with the checkpoint of up to 30 s before.)"""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = ["--games", "400", "--checkpoint-every", "1000"]  # after _cli's "0": the later one counts
    whole = tmp_path / "whole.npz"
    done = subprocess.run(
        _cli(["--out", str(whole)], tmp_path) + args, capture_output=True, text=True, env=env, timeout=240
    )
    assert done.returncode == 0, done.stderr
    out, ckpt = tmp_path / "stopped.npz", tmp_path / "stopped.ckpt.npz"
    proc = subprocess.Popen(
        _cli(["--out", str(out)], tmp_path) + args, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or ()), daemon=True)
    reader.start()
    deadline = time.monotonic() + 200
    while not any(" 30/400 games" in line for line in lines):
        assert proc.poll() is None and time.monotonic() < deadline, lines
        time.sleep(0.01)
    os.killpg(proc.pid, sig)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 128 + sig, err
    last = err.strip().splitlines()[-1]
    how = "interrupted (Ctrl-C)" if sig == signal.SIGINT else "stopped by SIGTERM"
    found = re.fullmatch(
        rf"error: {re.escape(how)} after (\d+) of 400 games; checkpoint (.+) holds them: the same "
        r"command goes on from there",
        last,
    )
    assert found is not None, err
    assert 30 <= int(found.group(1)) < 400 and found.group(2) == str(ckpt), err
    assert ckpt.exists() and not out.exists() and "Traceback" not in err
    rerun = subprocess.run(
        _cli(["--out", str(out)], tmp_path) + args, capture_output=True, text=True, env=env, timeout=240
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f"resumed at {found.group(1)} games" in rerun.stderr
    assert _same(load(whole).network.arrays(), load(out).network.arrays())


def test_arena_train_bad_options_say_what_is_wrong(tmp_path: Path) -> None:
    bad = subprocess.run(
        [*ARENA, "train", "--players", "2,5", "--out", str(tmp_path / "x.npz")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert "players must be among 2, 3, 4" in bad.stderr


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resumed"])
def test_a_stop_while_the_held_out_games_are_made_is_a_training_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resume: bool
) -> None:
    """A stop signal before the first chunk (the held-out games take seconds at every start) is
    reported as any other stop: :class:`TrainingStopped`, with what the checkpoint holds.  It
    escaped as a bare :class:`arena.lifecycle.Stopped` and ``arena train`` ended with the status
    but without a line (before the stop handling it said 'arena: interrupted (Ctrl-C)')."""
    from arena import lifecycle
    from arena.strength import train as train_mod

    ckpt = tmp_path / "c.npz"
    if resume:
        train(SMALL, ckpt, checkpoint_every=0, stop_after=1)
    made = train_mod.HeldOut.make

    def make_then_signal(config: TrainConfig) -> train_mod.HeldOut:
        held = made(config)
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, in the main thread
        return held

    monkeypatch.setattr(train_mod.HeldOut, "make", staticmethod(make_then_signal))
    before = {sig: signal.getsignal(sig) for sig in lifecycle.STOP_SIGNALS}
    try:
        with pytest.raises(train_mod.TrainingStopped) as stopped, lifecycle.StopSignals():
            train(SMALL, ckpt, checkpoint_every=0)
    finally:  # a stopped StopSignals leaves its handler in place (the command is on its way out)
        for sig, old in before.items():
            signal.signal(sig, old)
    assert stopped.value.signum == signal.SIGTERM
    assert stopped.value.games == (20 if resume else 0)
    assert stopped.value.checkpoint == (ckpt if resume else None)
