"""One leaderboard row type for every system, and the :func:`rate` dispatcher.

What ``rating``, ``lo`` and ``hi`` mean per system:

- ``"elo"``: the sequential Elo rating after all games (:mod:`arena.ratings.elo`); the interval is
  the percentile bootstrap of the same Elo replayed on resampled games (shared helper
  :mod:`arena.ratings.bootstrap`, whole duplicate-dice groups).
- ``"openskill"``: ``mu`` on OpenSkill's own scale (prior 25); the interval is ``mu ± 1.96 sigma``;
  ``ordinal`` holds the conservative ``mu - 3 sigma``.
- ``"pl"``: the Plackett-Luce maximum-likelihood rating on the Elo-like scale (mean bot 1500) with
  its percentile bootstrap interval (:mod:`arena.ratings.plackett_luce`).

Rows come sorted best first by :attr:`Rating.conservative` -- a value the bot is fairly sure to
deserve, so that a bot known from a few lucky games does not outrank one known from many: the
interval's lower bound for "elo" and "pl" (the point estimate when there is no interval), and
``mu - 3 sigma`` for "openskill" -- then by ``rating``, ties broken by bot id.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, get_args

from arena.ratings.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    check_level,
    percentile_interval,
    resample_counts,
)
from arena.ratings.elo import elo_ratings, elo_replicates
from arena.ratings.errors import UnknownRatingSystemError
from arena.ratings.openskill import openskill_ratings
from arena.ratings.plackett_luce import fit_plackett_luce
from arena.ratings.results import GameResult, check_results

__all__ = ["SYSTEMS", "Rating", "System", "rate"]

System = Literal["elo", "openskill", "pl"]
SYSTEMS: tuple[str, ...] = get_args(System)
"""The names :func:`rate` accepts."""


@dataclass(frozen=True, slots=True)
class Rating:
    """One leaderboard row.

    Attributes:
        bot: bot id.
        rating: point estimate on the system's scale.
        lo, hi: interval bounds (NaN when no interval could be computed, e.g. ``n_resamples=0``).
        games: games the bot played.
        system: the system that produced the row.
        ordinal: OpenSkill's ``mu - 3 sigma``; None for the other systems.
    """

    bot: str
    rating: float
    lo: float
    hi: float
    games: int
    system: str
    ordinal: float | None = None

    @property
    def conservative(self) -> float:
        """What the ranking sorts by: OpenSkill's ``mu - 3 sigma``; for the other systems the
        interval's lower bound, or the point estimate when there is no interval (NaN)."""
        if self.ordinal is not None:
            return self.ordinal
        return self.lo if math.isfinite(self.lo) else self.rating


def rate(
    results: Sequence[GameResult],
    system: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> list[Rating]:
    """Rate every bot in ``results`` with ``system`` ("elo", "openskill" or "pl"), best first by
    :attr:`Rating.conservative`.

    ``n_resamples``, ``seed`` and ``level`` set the bootstrap for "elo" and "pl"; for "openskill"
    only ``level`` is used (``mu ± z * sigma``, z = 1.96 at 0.95). Defaults of each system apply.

    Raises:
        UnknownRatingSystemError: ``system`` is not one of :data:`SYSTEMS`.
        RatingInputError: malformed results or settings (see the system's function).
    """
    if system not in SYSTEMS:
        raise UnknownRatingSystemError(f"unknown rating system {system!r}; expected one of {SYSTEMS}")
    games = check_results(results)
    check_level(level)
    rows: list[Rating] = []
    if system == "elo":
        point = elo_ratings(games)
        bots, reps = elo_replicates(games, resample_counts(games, n_resamples, seed))
        lo, hi = percentile_interval(reps, level)
        rows = [
            Rating(bot, point.ratings[bot], float(lo[i]), float(hi[i]), point.games[bot], system)
            for i, bot in enumerate(bots)
        ]
    elif system == "openskill":
        skills = openskill_ratings(games)
        z = _z(level)
        rows = [
            Rating(bot, s.mu, s.mu - z * s.sigma, s.mu + z * s.sigma, skills.games[bot], system, s.ordinal)
            for bot, s in skills.ratings.items()
        ]
    else:
        fit = fit_plackett_luce(games, n_resamples=n_resamples, seed=seed, level=level) if games else None
        if fit is not None:
            rows = [
                Rating(bot, e.value, e.lo, e.hi, fit.games[bot], system) for bot, e in fit.ratings.items()
            ]
    return sorted(rows, key=lambda row: (-row.conservative, -row.rating, row.bot))


def _z(level: float) -> float:
    """Two-sided normal quantile for ``level`` (1.959964 at 0.95)."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)
