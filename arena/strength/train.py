"""Training the learned evaluation by self-play: Monte-Carlo regression on final margins.

How it learns
=============

Games are played with the engine by a fast policy for every seat: the engine's greedy
(:class:`arena.engine.GreedyPolicy`) with exploration -- in setup and in the action phase a
uniformly random legal action with probability ``epsilon`` -- or, with ``policy="self"``, the
current network itself choosing the lounger action whose after-state it values most (rolling
stays greedy).  From every game the states at the start of each turn (and a fifth of the setup
states) are kept with each seat's **final margin** (score minus the mean of the others) as the
target; the network (:class:`arena.strength.value.Network`) is fitted to them by Adam on the
mean squared error, minibatches drawn from a buffer of the most recent samples.

Training runs in **chunks**: play ``chunk`` games, add their samples to the buffer, take
``steps`` Adam steps, measure, and (every ``checkpoint_every`` seconds, and at the end) write a
checkpoint.  Every random choice of chunk ``c`` comes from ``(seed, c)`` alone -- the game
seeds, the exploration and the minibatches -- so a run is reproducible from its seed, and a run
resumed from a checkpoint (always written between chunks) continues exactly as if it had never
stopped: the weights are bit for bit those of an uninterrupted run.

The learning curve is measured on **held-out** games (their own seeds, greedy play without
exploration, never trained on): the root-mean-square error of the predicted margins, in points,
after every chunk.  Two references go with it: predicting 0 for everyone, and predicting the
current score margin (what a player sees on the board).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from arena import lifecycle
from arena.engine import (
    Action,
    DiceStream,
    GreedyPolicy,
    Phase,
    State,
    apply,
    apply_throw,
    legal_actions,
    new_game,
    scores,
)

from .features import SCORE_SCALE, features_all, margins
from .value import TARGET_SCALE, Array, Network, ValueFunction, read_npz, save

CHECKPOINT_VERSION: Final = 1
POLICIES: Final = ("greedy", "self")


class TrainError(Exception):
    """Training cannot start or continue (a bad option, a checkpoint of another run)."""


class CheckpointDamagedError(TrainError):
    """A checkpoint file that cannot be read: damaged, or not a checkpoint at all."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides the result of a training run (``games`` may grow on resume)."""

    seed: int = 1
    games: int = 20_000  # self-play games in all
    chunk: int = 200  # games per chunk
    hidden: int = 32  # hidden units
    lr: float = 0.002  # Adam's step size
    steps: int = 150  # Adam steps per chunk
    batch: int = 256  # samples per step
    buffer: int = 150_000  # samples kept (the most recent)
    heldout: int = 300  # held-out games for the learning curve
    epsilon: float = 0.1  # exploration: a random setup/lounger action with this probability
    policy: str = "greedy"  # "greedy" or "self" (see the module docstring)
    players: tuple[int, ...] = (2, 3, 4)  # table sizes, in turn

    def check(self) -> None:
        """Raise :class:`TrainError` for values that cannot work."""
        if self.policy not in POLICIES:
            raise TrainError(f"unknown policy {self.policy!r} (choose from {', '.join(POLICIES)})")
        if not self.players or any(p not in (2, 3, 4) for p in self.players):
            raise TrainError(f"players must be among 2, 3, 4, got {self.players!r}")
        for name in ("games", "chunk", "hidden", "steps", "batch", "buffer"):
            if getattr(self, name) < 1:
                raise TrainError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.heldout < 0 or not 0 <= self.epsilon <= 1 or self.lr <= 0:
            raise TrainError("heldout >= 0, 0 <= epsilon <= 1 and lr > 0 are required")

    def identity(self) -> dict[str, Any]:
        """Every field but ``games``: a checkpoint continues only a run with the same identity."""
        out = asdict(self)
        del out["games"]
        out["players"] = list(self.players)
        return out


@dataclass
class Curve:
    """The learning curve: one point per chunk."""

    games: list[int] = field(default_factory=list)
    heldout_rmse: list[float] = field(default_factory=list)  # points, held-out games
    train_rmse: list[float] = field(default_factory=list)  # points, the chunk's games before training
    seconds: list[float] = field(default_factory=list)  # training time so far
    zero_rmse: float = 0.0  # held-out: predicting 0
    board_rmse: float = 0.0  # held-out: predicting the current score margin


@dataclass
class TrainState:
    """A run in progress: what a checkpoint holds."""

    config: TrainConfig
    network: Network
    chunk: int = 0
    games: int = 0
    adam_t: int = 0
    adam_m: dict[str, Array] = field(default_factory=dict)
    adam_v: dict[str, Array] = field(default_factory=dict)
    buf_x: Array = field(default_factory=lambda: np.zeros((0, 0)))
    buf_y: Array = field(default_factory=lambda: np.zeros(0))
    curve: Curve = field(default_factory=Curve)
    elapsed: float = 0.0


@dataclass(frozen=True)
class TrainProgress:
    """Reported after every chunk."""

    games: int
    total: int
    heldout_rmse: float
    train_rmse: float
    elapsed: float


# ---------------------------------------------------------------------------------- games


def derive_seed(*parts: object) -> int:
    """A dice seed (0 <= seed < 2**63) from ``parts``, the same on every machine."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class ExploringPolicy:
    """Every seat's player in a training game (see the module docstring)."""

    def __init__(self, rng: random.Random, epsilon: float, value: ValueFunction | None) -> None:
        self.rng = rng
        self.epsilon = epsilon
        self.value = value
        self.greedy = GreedyPolicy()

    def choose(self, state: State) -> Action:
        """A legal action for the seat to act."""
        legal = legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        if state.phase != Phase.ROLL and self.epsilon > 0 and self.rng.random() < self.epsilon:
            return legal[self.rng.randrange(len(legal))]
        if self.value is not None and state.phase == Phase.ACTION:
            after = [apply(state, a) for a in legal]
            vals = self.value.values_after(after, state.seat)
            return legal[int(np.argmax(vals))]
        return self.greedy.choose(state)


def play_samples(
    seed: int, players: int, policy: ExploringPolicy, rng: random.Random, setup_share: float = 0.2
) -> tuple[list[State], tuple[int, ...]]:
    """Play one game; the sampled states (turn starts, a share of the setup states) and the final
    scores."""
    dice = DiceStream(seed)
    state = new_game(players)
    kept: list[State] = []
    while not state.is_over:
        if state.is_chance:
            if state.throw_no == 0:
                kept.append(state)
            state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
        else:
            if state.phase == Phase.SETUP and rng.random() < setup_share:
                kept.append(state)
            state = apply(state, policy.choose(state))
    return kept, scores(state)


def rows_of(states: Sequence[State], final: Sequence[int]) -> tuple[Array, Array]:
    """Features (every seat of every state) and scaled targets (the seats' final margins)."""
    target = np.array(margins(list(final))) / TARGET_SCALE
    X = np.concatenate([features_all(s) for s in states]) if states else np.zeros((0, 0))
    y = np.tile(target, len(states))
    return X, y


def play_chunk(config: TrainConfig, chunk: int, value: ValueFunction | None) -> tuple[Array, Array]:
    """The samples of chunk ``chunk``'s games (a pure function of the config, the chunk and the
    network playing, if any)."""
    xs, ys = [], []
    for g in range(config.chunk):
        players = config.players[(chunk * config.chunk + g) % len(config.players)]
        rng = random.Random(derive_seed(config.seed, "explore", chunk, g))
        policy = ExploringPolicy(rng, config.epsilon, value)
        states, final = play_samples(derive_seed(config.seed, "game", chunk, g), players, policy, rng)
        X, y = rows_of(states, final)
        if len(y):
            xs.append(X)
            ys.append(y)
    return np.concatenate(xs), np.concatenate(ys)


@dataclass
class HeldOut:
    """Held-out games: per sampled state, its feature rows and its seats' final margins."""

    X: list[Array]
    y: list[Array]  # scaled margins

    @staticmethod
    def make(config: TrainConfig) -> HeldOut:
        """The held-out games of ``config`` (their own seeds, greedy play, no exploration)."""
        xs: list[Array] = []
        ys: list[Array] = []
        for g in range(config.heldout):
            players = config.players[g % len(config.players)]
            rng = random.Random(derive_seed(config.seed, "heldout-explore", g))
            policy = ExploringPolicy(rng, 0.0, None)
            states, final = play_samples(derive_seed(config.seed, "heldout", g), players, policy, rng, 0.0)
            target = np.array(margins(list(final))) / TARGET_SCALE
            for s in states:
                xs.append(features_all(s))
                ys.append(target)
        return HeldOut(xs, ys)

    def rmse(self, network: Network) -> float:
        """Root-mean-square error in points of the centred predictions (as :meth:`evaluate`)."""
        if not self.X:
            return float("nan")
        X = np.concatenate(self.X)
        pred = network.forward(X)
        err = 0.0
        k = 0
        for x, y in zip(self.X, self.y, strict=True):
            p = pred[k : k + len(x)]
            k += len(x)
            err += float(np.sum((p - p.mean() - y) ** 2))
        return float(np.sqrt(err / len(X))) * TARGET_SCALE

    def reference(self) -> tuple[float, float]:
        """RMSE of predicting 0, and of predicting the current score margin (feature
        ``margin_mean``)."""
        if not self.X:
            return float("nan"), float("nan")
        y = np.concatenate(self.y)
        board = np.concatenate([x[:, -2] for x in self.X]) * SCORE_SCALE / TARGET_SCALE
        zero = float(np.sqrt(np.mean(y * y))) * TARGET_SCALE
        return zero, float(np.sqrt(np.mean((board - y) ** 2))) * TARGET_SCALE


# ---------------------------------------------------------------------------------- fitting


def adam_steps(state: TrainState, chunk: int) -> None:
    """``config.steps`` Adam steps on minibatches from the buffer, drawn from ``(seed, chunk)``."""
    cfg = state.config
    net = state.network
    params = net.arrays()
    if not state.adam_m:
        state.adam_m = {k: np.zeros_like(a) for k, a in params.items()}
        state.adam_v = {k: np.zeros_like(a) for k, a in params.items()}
    rng = np.random.default_rng([cfg.seed, 7, chunk])
    n = len(state.buf_y)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for _ in range(cfg.steps):
        idx = rng.integers(0, n, size=min(cfg.batch, n))
        _loss, grads = net.gradients(state.buf_x[idx], state.buf_y[idx])
        state.adam_t += 1
        t = state.adam_t
        for k, g in grads.items():
            m = state.adam_m[k]
            v = state.adam_v[k]
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            step = cfg.lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
            params[k] -= step


def run_chunk(state: TrainState, heldout: HeldOut) -> TrainProgress:
    """Play, learn from and measure one chunk."""
    cfg = state.config
    started = time.perf_counter()
    player = ValueFunction(state.network) if cfg.policy == "self" and state.chunk > 0 else None
    X, y = play_chunk(cfg, state.chunk, player)  # the state is untouched until here
    with lifecycle.deferred_stop():  # then changed as a whole: a stop signal waits for the end
        pred = state.network.forward(X)
        train_rmse = float(np.sqrt(np.mean((pred - y) ** 2))) * TARGET_SCALE
        if state.buf_x.shape[0] == 0:
            state.buf_x, state.buf_y = X, y
        else:
            state.buf_x = np.concatenate([state.buf_x, X])[-cfg.buffer :]
            state.buf_y = np.concatenate([state.buf_y, y])[-cfg.buffer :]
        adam_steps(state, state.chunk)
        state.chunk += 1
        state.games += cfg.chunk
        state.elapsed += time.perf_counter() - started
        rmse = heldout.rmse(state.network)
        c = state.curve
        c.games.append(state.games)
        c.heldout_rmse.append(rmse)
        c.train_rmse.append(train_rmse)
        c.seconds.append(round(state.elapsed, 3))
    return TrainProgress(state.games, cfg.games, rmse, train_rmse, state.elapsed)


# ---------------------------------------------------------------------------------- checkpoints


def save_checkpoint(state: TrainState, path: Path) -> None:
    """Write ``state`` atomically (a temporary file, then a rename): a kill leaves the previous
    checkpoint or this one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    arrays: dict[str, Any] = {f"net_{k}": a for k, a in state.network.arrays().items()}
    arrays.update({f"m_{k}": a for k, a in state.adam_m.items()})
    arrays.update({f"v_{k}": a for k, a in state.adam_v.items()})
    c = state.curve
    info = {
        "version": CHECKPOINT_VERSION,
        "config": state.config.identity(),
        "games_target": state.config.games,
        "chunk": state.chunk,
        "games": state.games,
        "adam_t": state.adam_t,
        "elapsed": state.elapsed,
        "curve": {
            "games": c.games,
            "heldout_rmse": c.heldout_rmse,
            "train_rmse": c.train_rmse,
            "seconds": c.seconds,
            "zero_rmse": c.zero_rmse,
            "board_rmse": c.board_rmse,
        },
    }
    np.savez(tmp, info=np.array(json.dumps(info)), buf_x=state.buf_x, buf_y=state.buf_y, **arrays)
    tmp.replace(path)


def load_checkpoint(path: Path, config: TrainConfig) -> TrainState:
    """The run saved in ``path``; :class:`TrainError` when it belongs to a run with other options."""
    try:
        stored = read_npz(path)
        info = json.loads(str(stored["info"]))
    except (OSError, ValueError, KeyError) as exc:
        raise CheckpointDamagedError(
            f"cannot read the checkpoint {path}: {exc}; delete it (or give --fresh) to start afresh"
        ) from None
    if info.get("version") != CHECKPOINT_VERSION:
        raise TrainError(f"{path} is a checkpoint of another format; delete it to start afresh")
    if info["config"] != config.identity():
        diff = sorted(k for k in config.identity() if info["config"].get(k) != config.identity()[k])
        raise TrainError(
            f"{path} belongs to a run with other options ({', '.join(diff)} differ): "
            "use the same options to resume, or another --checkpoint (or --fresh) to start anew"
        )
    net = Network(**{k: stored[f"net_{k}"] for k in ("W1", "b1", "w2", "b2", "v")})
    m = {k[2:]: a for k, a in stored.items() if k.startswith("m_")}
    v = {k[2:]: a for k, a in stored.items() if k.startswith("v_")}
    cv = info["curve"]
    curve = Curve(
        cv["games"], cv["heldout_rmse"], cv["train_rmse"], cv["seconds"], cv["zero_rmse"], cv["board_rmse"]
    )
    return TrainState(
        config,
        net,
        chunk=info["chunk"],
        games=info["games"],
        adam_t=info["adam_t"],
        adam_m=m,
        adam_v=v,
        buf_x=stored["buf_x"],
        buf_y=stored["buf_y"],
        curve=curve,
        elapsed=info["elapsed"],
    )


# ---------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class TrainResult:
    """A finished run: the network (its meta says how it was made) and the learning curve."""

    network: Network
    curve: Curve
    resumed_from: int  # games already played when this call started (0: from scratch)
    elapsed: float  # seconds of training in all (every resumed part)


class TrainingStopped(lifecycle.Stopped):
    """Training was stopped by a signal (:class:`arena.lifecycle.StopSignals` in charge): the
    chunk in progress was dropped, and ``checkpoint`` (None when no chunk had finished, or no
    checkpoint file was asked for) holds every whole chunk, ``games`` games: running the same
    training again continues from there, exactly as if it had not stopped."""

    def __init__(self, signum: int, games: int, checkpoint: Path | None) -> None:
        super().__init__(signum)
        self.games = games
        self.checkpoint = checkpoint


def train(
    config: TrainConfig,
    checkpoint: Path | None = None,
    *,
    fresh: bool = False,
    checkpoint_every: float = 30.0,
    progress: Callable[[TrainProgress], None] | None = None,
    stop_after: int | None = None,
) -> TrainResult:
    """Train to ``config.games`` games, resuming from ``checkpoint`` when it exists (unless
    ``fresh``).  A checkpoint is written every ``checkpoint_every`` seconds (0: every chunk) and
    at the end.  ``stop_after`` chunks (for tests) simulates an interruption: the run stops after
    that many chunks of this call, leaving the checkpoint as an interrupted run would.  A stop
    signal (under :class:`arena.lifecycle.StopSignals`) drops the chunk in progress, writes the
    checkpoint of the whole ones and raises :class:`TrainingStopped`."""
    config.check()
    resumed = 0
    saved = 0  # games in the checkpoint file this run has written or resumed from
    state: TrainState | None = None
    try:
        if checkpoint is not None and checkpoint.exists() and not fresh:
            with lifecycle.deferred_stop():  # a stop while it loads: raised once it is loaded
                state = load_checkpoint(checkpoint, config)
                resumed = saved = state.games
        else:
            state = TrainState(config, Network.init(config.hidden, config.seed))
        # the held-out games take seconds before the first chunk: a stop then is one too
        heldout = HeldOut.make(config)
        state.curve.zero_rmse, state.curve.board_rmse = heldout.reference()
        last_save = time.monotonic()
        done_here = 0
        while state.games < config.games:
            report = run_chunk(state, heldout)
            done_here += 1
            if progress is not None:
                progress(report)
            due = time.monotonic() - last_save >= checkpoint_every
            if checkpoint is not None and (due or state.games >= config.games):
                save_checkpoint(state, checkpoint)
                saved, last_save = state.games, time.monotonic()
            if stop_after is not None and done_here >= stop_after:
                break
    except lifecycle.Stopped as stop:
        games = state.games if state is not None else 0
        kept = None
        if checkpoint is not None and state is not None and games > 0:
            if games != saved:
                save_checkpoint(state, checkpoint)
            kept = checkpoint
        raise TrainingStopped(stop.signum, games, kept) from None
    assert state is not None
    net = state.network
    net.meta = {
        "trained_games": state.games,
        "config": config.identity(),
        "heldout_rmse": state.curve.heldout_rmse[-1] if state.curve.heldout_rmse else None,
        "zero_rmse": state.curve.zero_rmse,
        "board_rmse": state.curve.board_rmse,
        "training_seconds": round(state.elapsed, 1),
    }
    return TrainResult(net, state.curve, resumed, state.elapsed)


def write_weights(result: TrainResult, path: Path) -> None:
    """Save the trained network as a weights file (:func:`arena.strength.value.save`)."""
    save(result.network, path)


# ---------------------------------------------------------------------------------- the plot


def curve_svg(curve: Curve, title: str = "Learning curve of the value network") -> str:
    """The learning curve as a self-contained SVG: held-out RMSE (points) against games played,
    with the two reference predictors as dashed lines."""
    w, h = 640, 360
    left, right, top, bottom = 64, 20, 40, 52
    pw, ph = w - left - right, h - top - bottom
    xs = curve.games or [0]
    ys = [y for y in curve.heldout_rmse if y == y] or [0.0]
    refs = [r for r in (curve.zero_rmse, curve.board_rmse) if r == r and r > 0]
    y_max = max([*ys, *refs]) * 1.08 or 1.0
    y_min = min(ys) * 0.9 if ys else 0.0
    y_min = max(0.0, min(y_min, *(refs or [y_min])) - 0.5)
    x_max = max(xs) or 1

    def px(x: float) -> float:
        return left + pw * x / x_max

    def py(y: float) -> float:
        return top + ph * (1 - (y - y_min) / (y_max - y_min or 1))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="#fff"/>',
        f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>',
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>',
    ]
    for k in range(5):
        yv = y_min + (y_max - y_min) * k / 4
        out.append(f'<text x="{left - 6}" y="{py(yv) + 4:.1f}" text-anchor="end">{yv:.1f}</text>')
        out.append(f'<line x1="{left}" y1="{py(yv):.1f}" x2="{left + pw}" y2="{py(yv):.1f}" stroke="#eee"/>')
        xv = x_max * k / 4
        out.append(f'<text x="{px(xv):.1f}" y="{top + ph + 16}" text-anchor="middle">{xv:,.0f}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 12}" text-anchor="middle">self-play games</text>')
    out.append(
        f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle">'
        "held-out RMSE of the final margin (points)</text>"
    )
    for ref, label, colour in (
        (curve.zero_rmse, "predict 0", "#adb5bd"),
        (curve.board_rmse, "predict the score margin now", "#f08c00"),
    ):
        if ref == ref and ref > 0:
            out.append(
                f'<line x1="{left}" y1="{py(ref):.1f}" x2="{left + pw}" y2="{py(ref):.1f}" '
                f'stroke="{colour}" stroke-dasharray="6 4"/>'
            )
            out.append(
                f'<text x="{left + pw - 4}" y="{py(ref) - 5:.1f}" text-anchor="end" fill="{colour}">'
                f"{label}: {ref:.2f}</text>"
            )
    pts = " ".join(
        f"{px(x):.1f},{py(y):.1f}" for x, y in zip(curve.games, curve.heldout_rmse, strict=True) if y == y
    )
    if pts:
        out.append(
            f'<polyline class="heldout" points="{pts}" fill="none" stroke="#1c7ed6" stroke-width="2"/>'
        )
        last = curve.heldout_rmse[-1]
        out.append(
            f'<text x="{left + pw - 4}" y="{py(last) + 16:.1f}" text-anchor="end" fill="#1c7ed6">'
            f"value network: {last:.2f}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
