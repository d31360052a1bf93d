"""The one bootstrap helper every rating system uses for its intervals.

Resampling unit: a *group*. Games that share a non-empty :attr:`GameResult.group` (duplicate dice:
one seed played under every seating) are drawn together, because they are not independent; a game
with an empty group is a group of its own. Each replicate draws as many groups as there are, with
replacement, and is described by the *multiplicity* of every game (how many times it was drawn).
Systems that are sums over games (the Plackett-Luce likelihood) use the multiplicities as weights;
order-dependent systems (Elo) replay the drawn games in their original order
(:func:`replicate_order`).

Intervals are percentile intervals of the replicate estimates. Replicates in which a bot did not
play are NaN for that bot and are left out of its percentiles.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from arena.ratings.errors import RatingInputError
from arena.ratings.results import GameResult

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "check_level",
    "percentile_interval",
    "replicate_order",
    "resample_counts",
]

DEFAULT_RESAMPLES = 200
"""Replicates per interval; enough for stable 95% percentile bounds (Efron & Tibshirani suggest >= 200)."""
DEFAULT_SEED = 0
"""Seed of the bootstrap RNG (:func:`numpy.random.default_rng`): same seed, same intervals."""
DEFAULT_LEVEL = 0.95
"""Two-sided coverage of the reported intervals."""


def check_level(level: float) -> float:
    """Return ``level`` if it lies strictly between 0 and 1, else raise :class:`RatingInputError`."""
    if not 0.0 < level < 1.0:
        raise RatingInputError(f"interval level must be in (0, 1), got {level!r}")
    return float(level)


def _group_of_games(results: Sequence[GameResult]) -> tuple[npt.NDArray[np.intp], int]:
    """Group index of every game (0..n_groups-1) and the number of groups."""
    ids: dict[str, int] = {}
    out = np.empty(len(results), dtype=np.intp)
    for index, result in enumerate(results):
        key = result.group if result.group else f"\0{index}"  # NUL cannot clash with a real group name
        out[index] = ids.setdefault(key, len(ids))
    return out, len(ids)


def resample_counts(
    results: Sequence[GameResult], n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> npt.NDArray[np.int32]:
    """Bootstrap replicates over groups of games, as game multiplicities.

    Returns:
        An array of shape ``(n_resamples, len(results))``; row ``r`` says how many times each game
        was drawn in replicate ``r``. Games of one group always have equal multiplicity. Fully
        determined by ``seed``.

    Raises:
        RatingInputError: ``n_resamples`` is negative.
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 0:
        raise RatingInputError(f"n_resamples must be a non-negative int, got {n_resamples!r}")
    group_of_game, n_groups = _group_of_games(results)
    rng = np.random.default_rng(seed)
    counts = np.empty((n_resamples, len(results)), dtype=np.int32)
    for row in range(n_resamples):
        drawn = rng.integers(0, n_groups, size=n_groups) if n_groups else np.empty(0, dtype=np.intp)
        counts[row] = np.bincount(drawn, minlength=n_groups)[group_of_game]
    return counts


def replicate_order(counts: npt.NDArray[np.integer]) -> npt.NDArray[np.intp]:
    """The games of one replicate in original order, each repeated by its multiplicity.

    >>> replicate_order(np.array([2, 0, 1])).tolist()
    [0, 0, 2]
    """
    return np.repeat(np.arange(counts.shape[0], dtype=np.intp), counts)


def percentile_interval(
    samples: npt.NDArray[np.float64], level: float = DEFAULT_LEVEL
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Percentile interval per column of ``samples`` (shape ``(replicates, quantities)``).

    NaN entries (quantity undefined in that replicate) are ignored; a column with no finite entry
    (or no replicates at all) gets a NaN interval.

    Raises:
        RatingInputError: ``level`` is not in (0, 1) or ``samples`` is not two-dimensional.
    """
    check_level(level)
    if samples.ndim != 2:
        raise RatingInputError(f"samples must be 2-D (replicates, quantities), got shape {samples.shape}")
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1], np.nan)
        return nan, nan.copy()
    tail = 100.0 * (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: NaN is the right answer
        lo = np.nanpercentile(samples, tail, axis=0)
        hi = np.nanpercentile(samples, 100.0 - tail, axis=0)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
