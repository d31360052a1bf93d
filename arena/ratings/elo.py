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

Intervals. The bootstrap interval of this rating is the spread of the sequential rating itself
over resampled games: how much the number depends on which games were played.  It is not a
confidence interval for a bot's strength: with K fixed, a rating starts at ``initial`` and moves
at most K points a game, so after few games every rating sits near 1500 whatever the strength,
and the spread does not shrink as games are added.  The Plackett-Luce fit
(:mod:`arena.ratings.plackett_luce`) is the estimate of strength with an honest interval.

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
    tables = _game_tables(games, index, n_bots, width, k, scale)
    steps = _replicate_steps(counts)  # (replicates, steps): the game each replicate plays at each step
    ratings = np.full(n_rep * (n_bots + 1), float(initial))  # flat: replicate r's bots at r*(n_bots+1)
    base = (np.arange(n_rep, dtype=np.intp) * (n_bots + 1))[:, None]
    for start in range(0, steps.shape[1], _CHUNK):
        _play_chunk(ratings, steps[:, start : start + _CHUNK].T, base, tables)
    played = (counts > 0).astype(np.float64) @ _incidence(games, index, n_bots)
    out = ratings.reshape(n_rep, n_bots + 1)[:, :n_bots]
    out[played == 0] = np.nan
    return bots, out


_CHUNK = 256
"""Steps whose gathered game tables :func:`elo_replicates` holds at once (a few MB)."""


@dataclass(frozen=True, slots=True)
class _GameTables:
    """The games of :func:`elo_replicates` as arrays, for every replicate at once.

    Per game (plus a no-op game at index ``n_games`` that pads short replicates): the rating column
    of each seat (a padded seat: the dummy column ``n_bots``, which never moves), and per unordered
    pair of seats ``p = (i, j)``, ``i < j`` (in the order of :attr:`pair_first`):

    - ``sign[g, p] = 2 S_ij - 1`` (1 win, 0 tie, -1 loss for seat ``i``);
    - ``weight[g, p] = K / (n - 1) / 2`` for a real pair, 0 for a padded one (and the no-op game).

    Why: ``S_ij - E_ij = (sign + tanh(y)) / 2`` with ``y = (R_j - R_i) ln 10 / (2 scale)``
    (``1 / (1 + 10 ** x) = (1 - tanh(x ln 10 / 2)) / 2``), and the pair's two terms are opposite
    (``S_ji - E_ji = -(S_ij - E_ij)``): one ``tanh`` per unordered pair, and the per-seat sums
    ``sum_j (S_ij - E_ij)`` are one small matrix product (:attr:`to_seats`). The gaps ``y`` are one
    matrix product too (:attr:`gap`).
    """

    seat_bot: npt.NDArray[np.intp]  # (games + 1, width)
    sign: npt.NDArray[np.float64]  # (games + 1, pairs)
    weight: npt.NDArray[np.float64]  # (games + 1, pairs)
    gap: npt.NDArray[np.float64]  # (width, pairs): ratings by seat @ gap = y per pair
    to_seats: npt.NDArray[np.float64]  # (pairs, width): +1 to seat i, -1 to seat j


def _game_tables(
    games: Sequence[GameResult], index: dict[str, int], n_bots: int, width: int, k: float, scale: float
) -> _GameTables:
    n_games = len(games)
    game_of, seat_of, bot_of, sizes = _seats(games, index)
    seat_bot = np.full((n_games + 1, width), n_bots, dtype=np.intp)
    seat_bot[game_of, seat_of] = bot_of
    placing = np.zeros((n_games + 1, width), dtype=np.int64)
    placing[game_of, seat_of] = [p for game in games for p in game.placings]
    size = np.zeros(n_games + 1, dtype=np.intp)
    size[:n_games] = sizes
    k_half = np.zeros(n_games + 1)
    k_half[:n_games] = k / (sizes - 1) / 2.0
    first = np.array([i for i in range(width) for j in range(i + 1, width)], dtype=np.intp)
    second = np.array([j for i in range(width) for j in range(i + 1, width)], dtype=np.intp)
    mine, theirs = placing[:, first], placing[:, second]
    sign = np.sign(theirs - mine).astype(np.float64)  # better placing: smaller number
    weight = np.where(second[None, :] < size[:, None], k_half[:, None], 0.0)
    pairs = np.arange(first.shape[0])
    gap = np.zeros((width, first.shape[0]))
    gap[second, pairs] = math.log(10.0) / (2.0 * scale)
    gap[first, pairs] = -math.log(10.0) / (2.0 * scale)
    to_seats = np.zeros((first.shape[0], width))
    to_seats[pairs, first] = 1.0
    to_seats[pairs, second] = -1.0
    return _GameTables(seat_bot, sign, weight, gap, to_seats)


def _replicate_steps(counts: npt.NDArray[np.integer]) -> npt.NDArray[np.signedinteger]:
    """``(replicates, steps)``: row ``r`` is :func:`~arena.ratings.bootstrap.replicate_order` of
    ``counts[r]``, padded with the no-op game ``n_games`` up to the longest replicate."""
    n_rep, n_games = counts.shape
    lengths = counts.sum(axis=1, dtype=np.int64)
    kind = np.int32 if n_games < 2**31 - 1 else np.int64  # half the memory of intp: 200 x 10,000 steps
    steps = np.full((n_rep, int(lengths.max(initial=0))), n_games, dtype=kind)
    for r in range(n_rep):
        steps[r, : lengths[r]] = replicate_order(counts[r])
    return steps


def _play_chunk(
    ratings: npt.NDArray[np.float64],
    steps: npt.NDArray[np.signedinteger],
    base: npt.NDArray[np.intp],
    t: _GameTables,
) -> None:
    """Apply ``steps`` (``(steps, replicates)`` game indices) to the flat ``ratings`` in place: at
    each step every replicate plays its game, seats updated together from the ratings before it
    (the formulas of :func:`elo_game_deltas`, rewritten as in :class:`_GameTables`)."""
    seats = t.seat_bot[steps] + base[None, :, :]  # (steps, replicates, width): flat rating index
    sign, weight = t.sign[steps], t.weight[steps]  # (steps, replicates, pairs)
    gap, to_seats = t.gap, t.to_seats
    for s in range(steps.shape[0]):
        at = seats[s]
        before = ratings[at]
        term = np.tanh(before @ gap)
        term += sign[s]
        term *= weight[s]
        after = term @ to_seats
        after += before
        ratings[at] = after


def _seats(
    games: Sequence[GameResult], index: dict[str, int]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Every seat of every game, flat: its game, its seat number, its bot's index; and the
    number of seats of each game."""
    sizes = np.fromiter((len(game.players) for game in games), dtype=np.intp, count=len(games))
    game_of = np.repeat(np.arange(len(games), dtype=np.intp), sizes)
    seat_of = np.arange(game_of.shape[0], dtype=np.intp) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    bot_of = np.fromiter((index[bot] for game in games for bot in game.players), dtype=np.intp)
    return game_of, seat_of, bot_of, sizes


def _incidence(games: Sequence[GameResult], index: dict[str, int], n_bots: int) -> npt.NDArray[np.float64]:
    """``(games, bots)`` matrix with 1 where the bot played the game."""
    inc = np.zeros((len(games), n_bots))
    game_of, _, bot_of, _ = _seats(games, index)
    inc[game_of, bot_of] = 1.0
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
