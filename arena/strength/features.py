"""The features of a game state seen from one seat: the input of the learned evaluation.

:func:`features` turns ``(state, seat)`` into a fixed-length float vector whose entries are named
by :data:`FEATURE_NAMES` (in order).  The layout is identified by :data:`LAYOUT_HASH` (a hash of
the names and the scales): weights trained for one layout are refused by another
(:mod:`arena.strength.value`).  Change anything here and the hash changes; retrain then.

What is in it (all scaled to roughly 0..1):

* the table: player count (one-hot), setup or not, how far the game is (occupied loungers
  against R25's end threshold of ``state.rules``), the final round (R25), which seat acts next
  relative to ``seat`` (one-hot, 0 = ``seat`` itself), chips in the pool, free five-loungers,
  the lifeguard's position (one-hot, 12 places, R6);
* for ``seat`` (``me_*``) and, averaged over the other seats (``opp_*``): the score (R27), plain
  own towels without a figure by value (2, 3, 4: they may still be flipped), own plain towels
  carrying another's figure by value (RECLAIM race), figures on other players' plain towels by
  value (CONQUER race), towels and figures in supply, chips held, and the value of plain free
  towels per colour (what the dice of each colour can still secure);
* the best opponent's score and the margins ``me - mean(opp)`` and ``me - max(opp)``.

The dice of a turn in progress (kept, last throw, result) are **not** features: the evaluation
is meant for states between turns (a setup decision, the start of a turn, the end of the game).
"""

from __future__ import annotations

import hashlib
from typing import Final

import numpy as np
import numpy.typing as npt

from arena.engine import Phase, State
from arena.engine.board import (
    CHIPS_TOTAL,
    FIGURES_PER_PLAYER,
    FIVES,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    N_LOUNGERS,
    TOWELS_PER_PLAYER,
    TRACK_LEN,
)

SCORE_SCALE: Final = 40.0  # a typical final score is 20-45 points

_SEAT_PARTS: Final = (
    "score",
    "plain_2",
    "plain_3",
    "plain_4",
    "raided_2",
    "raided_3",
    "raided_4",
    "figure_on_2",
    "figure_on_3",
    "figure_on_4",
    "towels_supply",
    "figures_supply",
    "chips",
    *(f"plain_colour_{c}" for c in range(N_COLOURS)),
)
N_SEAT_PARTS: Final = len(_SEAT_PARTS)

FEATURE_NAMES: Final[tuple[str, ...]] = (
    "bias",
    "players_2",
    "players_3",
    "players_4",
    "setup",
    "progress",
    "final_round",
    *(f"to_act_{k}" for k in range(4)),
    "pool",
    "fives_free",
    *(f"guard_{p}" for p in range(-1, TRACK_LEN)),
    *(f"me_{x}" for x in _SEAT_PARTS),
    *(f"opp_{x}" for x in _SEAT_PARTS),
    "opp_max_score",
    "margin_mean",
    "margin_max",
)
N_FEATURES: Final = len(FEATURE_NAMES)
_SEAT0: Final = FEATURE_NAMES.index("me_score")
_OPP0: Final = FEATURE_NAMES.index("opp_score")
_GUARD0: Final = FEATURE_NAMES.index("guard_-1")

#: Identifies the layout (names, order and scales); stored with trained weights.
LAYOUT_HASH: Final = hashlib.sha256(
    ("\n".join(FEATURE_NAMES) + f"\nscore/{SCORE_SCALE}\nv1").encode("ascii")
).hexdigest()[:16]


def seat_parts(state: State) -> list[list[float]]:
    """Per seat, the ``me_*`` block of :data:`FEATURE_NAMES` (unscaled score first, see
    :func:`features`)."""
    n = state.players
    parts = [[0.0] * N_SEAT_PARTS for _ in range(n)]
    towel, secured, figure = state.towel, state.secured, state.figure
    for i in range(N_LOUNGERS):
        owner = towel[i]
        v = LOUNGER_VALUE[i]
        if secured[i]:
            parts[owner][0] += v
            continue
        fig = figure[i]
        if fig >= 0:
            parts[fig][0] += 1  # R27: a figure on a foreign towel scores 1
            parts[fig][5 + v] += 1  # figure_on_v (v = 2..4 -> index 7..9)
            parts[owner][2 + v] += 1  # raided_v (index 4..6)
        elif owner >= 0:
            parts[owner][v - 1] += 1  # plain_v (index 1..3)
            parts[owner][13 + LOUNGER_COLOUR[i]] += v  # plain_colour_c (index 13..17)
    for p in range(n):
        row = parts[p]
        row[0] += state.chips[p] // 2
        for k in range(1, 10):
            row[k] /= 6.0
        row[10] = state.towels[p] / TOWELS_PER_PLAYER
        row[11] = state.figures[p] / FIGURES_PER_PLAYER
        row[12] = state.chips[p] / 4.0
        for k in range(13, 13 + N_COLOURS):
            row[k] /= 12.0
    return parts


def table_features(state: State) -> list[float]:
    """The entries before ``me_score``: the same for every seat except ``to_act_*``
    (filled in by :func:`features`)."""
    out = [0.0] * _SEAT0
    out[0] = 1.0
    out[state.players - 1] = 1.0  # players_2..4 at 1..3
    out[4] = 1.0 if state.phase == Phase.SETUP else 0.0
    end = N_LOUNGERS - state.rules.end_unoccupied
    out[5] = min(1.0, state.occupied / end)
    out[6] = 1.0 if state.final_round else 0.0
    out[11] = state.pool / CHIPS_TOTAL
    out[12] = sum(1 for i in FIVES if towel_free(state, i)) / 2.0
    out[_GUARD0 + state.guard + 1] = 1.0
    return out


def towel_free(state: State, lounger: int) -> bool:
    """True when ``lounger`` carries no towel."""
    return state.towel[lounger] < 0


def features(state: State, seat: int) -> npt.NDArray[np.float64]:
    """The feature vector of ``state`` seen from ``seat`` (length :data:`N_FEATURES`)."""
    row: npt.NDArray[np.float64] = features_all(state)[seat]
    return row


def features_all(state: State) -> npt.NDArray[np.float64]:
    """Every seat's feature vector, one row per seat (shape ``(players, N_FEATURES)``)."""
    n = state.players
    parts = seat_parts(state)
    base = table_features(state)
    scores = [parts[p][0] for p in range(n)]
    for p in range(n):
        parts[p][0] = scores[p] / SCORE_SCALE
    out = np.zeros((n, N_FEATURES))
    acting = state.seat if state.phase != Phase.OVER else -1
    for p in range(n):
        row = out[p]
        row[:_SEAT0] = base
        if acting >= 0:
            row[7 + (acting - p) % n] = 1.0
        row[_SEAT0:_OPP0] = parts[p]
        others = [parts[q] for q in range(n) if q != p]
        row[_OPP0 : _OPP0 + N_SEAT_PARTS] = np.mean(others, axis=0)
        best = max(scores[q] for q in range(n) if q != p)
        mean = sum(scores[q] for q in range(n) if q != p) / (n - 1)
        row[-3] = best / SCORE_SCALE
        row[-2] = (scores[p] - mean) / SCORE_SCALE
        row[-1] = (scores[p] - best) / SCORE_SCALE
    return out


def margins(points: tuple[int, ...] | list[int] | list[float]) -> list[float]:
    """Each seat's margin: its points minus the mean of the other seats' (they sum to 0)."""
    n = len(points)
    total = sum(points)
    return [p - (total - p) / (n - 1) for p in points]


__all__ = [
    "FEATURE_NAMES",
    "LAYOUT_HASH",
    "N_FEATURES",
    "features",
    "features_all",
    "margins",
]
