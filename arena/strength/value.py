"""The learned evaluation: a tiny neural network, evaluated with numpy, that predicts final margins.

Contract
========

:meth:`ValueFunction.evaluate` maps a state to one number per seat: that seat's **expected final
margin** in points -- its final score (R27) minus the mean final score of the other seats -- if
the game is played on from ``state``.  The margins of a state sum to 0 (the raw predictions are
centred).  A finished game is not predicted: its margins are exact (:func:`margins` of the
scores).  The network reads :func:`arena.strength.features.features_all`, which ignores the dice
of a turn in progress: evaluate states **between turns** (a setup decision, the start of a turn
before its first throw, the end of the game), e.g. the state right after a lounger action.

:meth:`ValueFunction.leaf` is the leaf hook for a search: ``leaf(state, seat) -> float``, the
same number for one seat; :meth:`ValueFunction.values_after` evaluates many states for one seat
in one batch (a decision's candidate after-states).

The network: ``y = w2 . tanh(W1 x + b1) + b2 + v . x`` (one hidden layer plus a linear skip),
``x`` the feature vector, ``y`` the margin divided by :data:`TARGET_SCALE`.  Weights live in an
``.npz`` file with a format version and the feature layout hash; :func:`load` refuses a file
whose format or layout does not match this code (:class:`WeightsMismatchError`).
:func:`load_default` loads the weights shipped in ``arena/strength/weights/``.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from arena.engine import State, scores

from .features import LAYOUT_HASH, N_FEATURES, features_all, margins

FORMAT_VERSION: Final = 1
TARGET_SCALE: Final = 10.0  # the network predicts margin / 10
WEIGHTS_DIR: Final = Path(__file__).resolve().parent / "weights"
DEFAULT_WEIGHTS: Final = WEIGHTS_DIR / "value-v1.npz"
ARRAYS: Final = ("W1", "b1", "w2", "b2", "v")

Array = npt.NDArray[np.float64]


class WeightsError(ValueError):
    """A weights file that cannot be used."""


class WeightsMissingError(WeightsError):
    """The weights file does not exist or cannot be read."""


class WeightsMismatchError(WeightsError):
    """The weights were made for another file format or another feature layout."""


@dataclass
class Network:
    """The parameters of the network (float64 arrays) and free-form metadata."""

    W1: Array
    b1: Array
    w2: Array
    b2: Array
    v: Array
    meta: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def init(hidden: int, seed: int) -> Network:
        """Small random weights from ``seed`` (numpy's PCG64: the same on every machine)."""
        rng = np.random.default_rng([seed, 0x5EED])
        return Network(
            W1=rng.normal(0.0, 1.0 / np.sqrt(N_FEATURES), size=(N_FEATURES, hidden)),
            b1=np.zeros(hidden),
            w2=rng.normal(0.0, 1.0 / np.sqrt(hidden), size=hidden) * 0.1,
            b2=np.zeros(1),
            v=np.zeros(N_FEATURES),
        )

    @property
    def hidden(self) -> int:
        """Hidden units."""
        return int(self.W1.shape[1])

    def arrays(self) -> dict[str, Array]:
        """The parameters by name (the same objects, not copies)."""
        return {"W1": self.W1, "b1": self.b1, "w2": self.w2, "b2": self.b2, "v": self.v}

    def copy(self) -> Network:
        """A deep copy."""
        return Network(**{k: a.copy() for k, a in self.arrays().items()}, meta=dict(self.meta))

    def forward(self, X: Array) -> Array:
        """Scaled predictions (margin / TARGET_SCALE) for rows of features ``X``."""
        h = np.tanh(X @ self.W1 + self.b1)
        out: Array = h @ self.w2 + self.b2[0] + X @ self.v
        return out

    def gradients(self, X: Array, y: Array) -> tuple[float, dict[str, Array]]:
        """Mean squared error on ``(X, y)`` and its gradient by parameter."""
        h = np.tanh(X @ self.W1 + self.b1)
        pred = h @ self.w2 + self.b2[0] + X @ self.v
        err = pred - y
        n = len(y)
        d = 2.0 * err / n
        dh = np.outer(d, self.w2) * (1.0 - h * h)
        grads = {
            "W1": X.T @ dh,
            "b1": dh.sum(axis=0),
            "w2": h.T @ d,
            "b2": np.array([d.sum()]),
            "v": X.T @ d,
        }
        return float(np.mean(err * err)), grads


class ValueFunction:
    """The evaluation: expected final margins per seat (see the module docstring)."""

    def __init__(self, network: Network, source: str = "") -> None:
        self.network = network
        self.source = source  # where the weights came from (for reports)

    @property
    def name(self) -> str:
        """A short identification: the weights file and its layout."""
        label = Path(self.source).name if self.source else "in-memory weights"
        return f"{label} (layout {LAYOUT_HASH})"

    def evaluate(self, state: State) -> Array:
        """Each seat's expected final margin in points (shape ``(players,)``, sums to 0)."""
        if state.is_over:
            return np.array(margins(scores(state)), dtype=np.float64)
        raw = self.network.forward(features_all(state)) * TARGET_SCALE
        centred: Array = raw - raw.mean()
        return centred

    def leaf(self, state: State, seat: int) -> float:
        """The search's leaf hook: ``seat``'s expected final margin from ``state``."""
        return float(self.evaluate(state)[seat])

    def values_after(self, states: Sequence[State], seat: int) -> Array:
        """:meth:`leaf` of ``seat`` for many states of one game (same player count), batched."""
        if not states:
            return np.zeros(0)
        n = states[0].players
        out = np.zeros(len(states))
        live = [k for k, s in enumerate(states) if not s.is_over]
        for k, s in enumerate(states):
            if s.is_over:
                out[k] = margins(scores(s))[seat]
        if live:
            X = np.concatenate([features_all(states[k]) for k in live])
            raw = self.network.forward(X).reshape(len(live), n) * TARGET_SCALE
            out[live] = raw[:, seat] - raw.mean(axis=1)
        return out


def save(network: Network, path: Path) -> None:
    """Write ``network`` to ``path`` (``.npz``) with the format version and the layout hash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    arrays: dict[str, Any] = {
        "format_version": np.array(FORMAT_VERSION),
        "layout": np.array(LAYOUT_HASH),
        "meta": np.array(json.dumps(network.meta, sort_keys=True)),
        **network.arrays(),
    }
    np.savez(tmp, **arrays)
    tmp.replace(path)


def read_npz(path: Path) -> dict[str, Any]:
    """The arrays of the ``.npz`` archive ``path``, nothing unpickled; ``ValueError`` when the file
    is not such an archive at all (numpy's own words for that suggested loading it with pickle),
    ``OSError`` when it cannot be read."""
    with path.open("rb") as fh:
        if fh.read(4) != b"PK\x03\x04":
            raise ValueError("it is not a .npz archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except zipfile.BadZipFile as exc:
        raise ValueError(f"a damaged .npz archive ({exc})") from None


def load(path: Path | str) -> ValueFunction:
    """The :class:`ValueFunction` of a weights file; :class:`WeightsMissingError` when it cannot
    be read, :class:`WeightsMismatchError` when it was made for another format or feature layout."""
    path = Path(path)
    try:
        stored = read_npz(path)
    except FileNotFoundError:
        raise WeightsMissingError(f"no weights file at {path}; train one with 'arena train'") from None
    except (OSError, ValueError) as exc:
        raise WeightsMissingError(f"cannot read the weights file {path}: {exc}") from None
    version = int(stored["format_version"]) if "format_version" in stored else None
    if version != FORMAT_VERSION:
        raise WeightsMismatchError(
            f"{path} has weights format {version}, this code reads format {FORMAT_VERSION}: "
            "retrain with 'arena train' (or use the Pool Arena version that wrote it)"
        )
    layout = str(stored["layout"]) if "layout" in stored else None
    if layout != LAYOUT_HASH:
        raise WeightsMismatchError(
            f"{path} was trained for feature layout {layout}, this code computes layout {LAYOUT_HASH} "
            "(arena/strength/features.py changed): retrain with 'arena train'"
        )
    missing = [k for k in ARRAYS if k not in stored]
    if missing:
        raise WeightsMismatchError(f"{path} lacks the arrays {', '.join(missing)}")
    net = Network(
        **{k: np.asarray(stored[k], dtype=np.float64) for k in ARRAYS},
        meta=json.loads(str(stored["meta"])) if "meta" in stored else {},
    )
    if net.W1.shape[0] != N_FEATURES or net.v.shape != (N_FEATURES,):
        raise WeightsMismatchError(f"{path} has {net.W1.shape[0]} inputs, the features have {N_FEATURES}")
    return ValueFunction(net, str(path))


_DEFAULT: ValueFunction | None = None


def load_default() -> ValueFunction:
    """The weights shipped with Pool Arena (``arena/strength/weights/value-v1.npz``), loaded once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load(DEFAULT_WEIGHTS)
    return _DEFAULT


def leaf_value(state: State, seat: int) -> float:
    """The shipped evaluation as a search's leaf hook: ``seat``'s expected final margin from
    ``state`` (:meth:`ValueFunction.leaf` of :func:`load_default`).  The search bot takes it as
    ``SEARCH_BOT_VALUE=arena.strength.value:leaf_value`` (:func:`arena.strength.search.load_worth_model`
    wraps it in a ``ValueWorths``)."""
    return load_default().leaf(state, seat)
