"""Elo for multiplayer games, decomposed into pairwise results.

Model. Every pair of seats (i, j) in a game is one Elo "encounter": i scores ``S_ij`` = 1 if it
placed better than j, 0.5 if they tied, 0 if it placed worse, against the expectation

    E_ij = 1 / (1 + 10 ** ((R_j - R_i) / scale)).

Update. Games are applied one after another in list order; inside a game every seat is updated
simultaneously from the ratings held *before* that game:

    R_i += K / (n - 1) * sum_{j != i} (S_ij - E_ij)

for an ``n``-player game. The factor ``1 / (n - 1)`` makes a 4-player game move a rating about as
much as one 2-player game (each seat meets ``n - 1`` opponents). With equal ratings a 2-player win
moves the winner up by ``K / 2`` and the loser down by ``K / 2`` (8 points with the default K=16).
Each pair's two updates cancel, so every game is zero-sum and the mean rating stays ``initial``.

Defaults: ``K = 16`` per pair, ``scale = 400`` (a 400-point gap means 10:1 expected odds),
``initial = 1500``.

:func:`elo_diff_from_share` turns a measured score share (candidate against baseline) into an Elo
difference with a Wilson interval; it is what the tournament reports for candidate-vs-baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from arena.ratings.bootstrap import DEFAULT_LEVEL, check_level, replicate_order
from arena.ratings.errors import RatingInputError
from arena.ratings.results import GameResult, bots_of, check_results, games_played

__all__ = [
    "ELO_INITIAL",
    "ELO_K",
    "ELO_SCALE",
    "EloRatings",
    "elo_diff_from_share",
    "elo_game_deltas",
    "elo_ratings",
    "elo_replicates",
    "expected_score",
    "pair_score",
    "share_from_elo_diff",
]

ELO_K = 16.0
"""K per pair of seats; scaled by 1/(n-1) in an n-player game."""
ELO_SCALE = 400.0
"""Rating gap that means 10:1 expected odds."""
ELO_INITIAL = 1500.0
"""Rating of a bot before its first game."""


@dataclass(frozen=True, slots=True)
class EloRatings:
    """Result of :func:`elo_ratings`: final rating and number of games per bot."""

    ratings: dict[str, float]
    games: dict[str, int]


def _check_params(k: float, scale: float) -> None:
    if not (math.isfinite(k) and k > 0):
        raise RatingInputError(f"Elo K must be a positive finite number, got {k!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise RatingInputError(f"Elo scale must be a positive finite number, got {scale!r}")


def expected_score(rating: float, opponent: float, scale: float = ELO_SCALE) -> float:
    """Expected pairwise score of ``rating`` against ``opponent`` (0..1; 0.5 when equal)."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / scale))


def pair_score(placing: int, other: int) -> float:
    """Pairwise score from placings: 1 for the better placing, 0.5 for a tie, 0 for the worse."""
    if placing < other:
        return 1.0
    return 0.5 if placing == other else 0.0


def elo_game_deltas(
    ratings: Sequence[float], placings: Sequence[int], k: float = ELO_K, scale: float = ELO_SCALE
) -> list[float]:
    """Rating change per seat for one game, from the pre-game ``ratings`` (seat order).

    The changes sum to zero (up to rounding).
    """
    n = len(ratings)
    k_pair = k / (n - 1)
    deltas = []
    for i in range(n):
        total = 0.0
        for j in range(n):
            if j != i:
                total += pair_score(placings[i], placings[j]) - expected_score(ratings[i], ratings[j], scale)
        deltas.append(k_pair * total)
    return deltas


def elo_ratings(
    results: Sequence[GameResult],
    *,
    k: float = ELO_K,
    scale: float = ELO_SCALE,
    initial: float = ELO_INITIAL,
) -> EloRatings:
    """Sequential Elo over ``results`` in list order (see the module docstring for the formulas).

    Bots start at ``initial`` when they first appear. Pure: the same list gives the same ratings.

    Raises:
        RatingInputError: an item is not a :class:`GameResult`, or ``k``/``scale`` is not positive.
    """
    _check_params(k, scale)
    games = check_results(results)
    ratings: dict[str, float] = {}
    for game in games:
        before = [ratings.get(bot, initial) for bot in game.players]
        for bot, old, delta in zip(
            game.players, before, elo_game_deltas(before, game.placings, k, scale), strict=True
        ):
            ratings[bot] = old + delta
    return EloRatings(ratings=ratings, games=games_played(games))


def elo_replicates(
    results: Sequence[GameResult],
    counts: npt.NDArray[np.integer],
    *,
    k: float = ELO_K,
    scale: float = ELO_SCALE,
    initial: float = ELO_INITIAL,
) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Elo of many replicates of ``results`` at once (vectorised across replicates).

    Row ``r`` of ``counts`` (shape ``(replicates, len(results))``, from
    :func:`arena.ratings.bootstrap.resample_counts`) gives each game's multiplicity; the replicate
    replays the drawn games in original order (:func:`~arena.ratings.bootstrap.replicate_order`),
    exactly as :func:`elo_ratings` would on that list.

    Returns:
        The sorted bot ids and an array ``(replicates, bots)`` of final ratings; NaN where the bot
        played no game in that replicate.

    Raises:
        RatingInputError: bad ``k``/``scale``, or ``counts`` has the wrong shape or negative entries.
    """
    _check_params(k, scale)
    games = check_results(results)
    bots = bots_of(games)
    n_games, n_bots = len(games), len(bots)
    if counts.ndim != 2 or counts.shape[1] != n_games:
        raise RatingInputError(f"counts must have shape (replicates, {n_games}), got {counts.shape}")
    if counts.size and counts.min() < 0:
        raise RatingInputError("counts must be non-negative multiplicities")
    n_rep = counts.shape[0]
    width = max((g.n_players for g in games), default=2)
    index = {bot: i for i, bot in enumerate(bots)}
    pad = n_bots  # a dummy rating column absorbs padded seats; game n_games is a no-op game
    seat_bot = np.full((n_games + 1, width), pad, dtype=np.intp)
    score = np.zeros((n_games + 1, width, width))  # S_ij where (i, j) is a real pair, else 0
    pair = np.zeros((n_games + 1, width, width))  # 1 where (i, j) is a real pair
    k_pair = np.zeros(n_games + 1)
    for g, game in enumerate(games):
        n = game.n_players
        seat_bot[g, :n] = [index[bot] for bot in game.players]
        k_pair[g] = k / (n - 1)
        for i in range(n):
            for j in range(n):
                if i != j:
                    pair[g, i, j] = 1.0
                    score[g, i, j] = pair_score(game.placings[i], game.placings[j])
    orders = [replicate_order(row) for row in counts]
    length = max((len(order) for order in orders), default=0)
    steps = np.full((n_rep, length), n_games, dtype=np.intp)
    for r, order in enumerate(orders):
        steps[r, : len(order)] = order
    ratings = np.full((n_rep, n_bots + 1), float(initial))
    rows = np.arange(n_rep)[:, None]
    for t in range(length):
        step = steps[:, t]
        seats = seat_bot[step]  # (replicates, width)
        before = ratings[rows, seats]
        gap = (before[:, None, :] - before[:, :, None]) / scale  # [r, i, j] = (R_j - R_i) / scale
        expected = 1.0 / (1.0 + np.power(10.0, gap))
        delta = k_pair[step][:, None] * np.sum(pair[step] * (score[step] - expected), axis=2)
        ratings[rows, seats] = before + delta
    played = (counts > 0).astype(np.float64) @ _incidence(games, index, n_bots)
    out = ratings[:, :n_bots]
    out[played == 0] = np.nan
    return bots, out


def _incidence(games: Sequence[GameResult], index: dict[str, int], n_bots: int) -> npt.NDArray[np.float64]:
    """``(games, bots)`` matrix with 1 where the bot played the game."""
    inc = np.zeros((len(games), n_bots))
    for g, game in enumerate(games):
        inc[g, [index[bot] for bot in game.players]] = 1.0
    return inc


def share_from_elo_diff(diff: float, scale: float = ELO_SCALE) -> float:
    """Expected score share for an Elo difference ``diff`` (inverse of the point estimate below)."""
    return 1.0 / (1.0 + math.pow(10.0, -diff / scale))


def _diff_from_share(share: float, scale: float) -> float:
    if share <= 0.0:
        return -math.inf
    if share >= 1.0:
        return math.inf
    return scale * math.log10(share / (1.0 - share))


def elo_diff_from_share(
    share: float, n: int, *, level: float = DEFAULT_LEVEL, scale: float = ELO_SCALE
) -> tuple[float, float, float]:
    """Elo difference implied by a score share, with a confidence interval.

    Args:
        share: points scored divided by points available against the baseline (win 1, draw 0.5),
            in [0, 1].
        n: number of independent encounters behind ``share`` (games, or duplicate-dice groups
            when the share is averaged per group).
        level: two-sided coverage of the interval (default 0.95, z = 1.96).
        scale: Elo scale (400).

    Method: point estimate ``diff = scale * log10(share / (1 - share))`` (the logistic Elo curve
    inverted); the interval is the Wilson score interval for a binomial proportion at ``share`` with
    ``n`` trials, whose ends are mapped through the same curve. Draws make the true variance smaller
    than the binomial one, so the interval is conservative then. A share of 0 or 1 gives an infinite
    point estimate and an interval that is infinite on that side but finite on the other.

    Returns:
        ``(diff, lo, hi)`` in Elo points, ``lo <= diff <= hi``.

    Raises:
        RatingInputError: ``share`` outside [0, 1] or not finite, ``n`` < 1, or ``level``/``scale`` invalid.

    >>> [round(x, 1) for x in elo_diff_from_share(0.5, 100)]
    [0.0, -67.7, 67.7]
    """
    if not (isinstance(share, int | float) and math.isfinite(share) and 0.0 <= share <= 1.0):
        raise RatingInputError(f"share must be a number in [0, 1], got {share!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RatingInputError(f"n must be a positive int, got {n!r}")
    check_level(level)
    _check_params(ELO_K, scale)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    z2n = z * z / n
    centre = (share + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(share * (1.0 - share) / n + z2n / (4.0 * n))
    lo_share = 0.0 if share == 0.0 else max(0.0, centre - half)  # exact ends: no rounding residue
    hi_share = 1.0 if share == 1.0 else min(1.0, centre + half)
    return (
        _diff_from_share(share, scale),
        _diff_from_share(lo_share, scale),
        _diff_from_share(hi_share, scale),
    )
