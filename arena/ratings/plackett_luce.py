"""Batch maximum-likelihood fit of a Plackett-Luce model with seat advantages and bootstrap intervals.

Model. In a game, the player in seat ``s`` of an ``n``-player game, played by bot ``b``, has
log-strength ``theta_b + delta_(n, s)``. The finishing order is built from the top: each place is
taken by one of the players still unplaced with probability proportional to ``exp(log-strength)``
(Plackett 1975, Luce 1959). ``delta_(n, 0) = 0``: seat advantages are measured against the first
seat of a game of the same size. They are estimated per player count because moving second of two
and second of four are different positions; pass ``seat_effects=False`` to drop them.

Ties. A tie of ``t`` players is treated as the average of the ``t!`` strict orders that break it,
each with weight ``1/t!`` (a 2-way tie is "each way round with half weight"; a 2-player draw counts
as half a win and half a loss, as in Elo). Averaging the log-likelihood over the orders expands
exactly into choice events: the remaining tied set is ``S`` with probability ``1/C(t, |S|)``
and each member of ``S`` is chosen next with probability ``1/|S|``, from ``S`` plus everyone placed
below the tie. Cost grows as ``2^t``, which is nothing for 2-4 player games.

Fit. The objective is the negative log-likelihood plus a ridge ``ridge/2 * |x|^2`` on all
parameters (a normal prior with sd ``1/sqrt(ridge)`` = 10 by default): it keeps a bot that never
loses finite, and since the likelihood is unchanged when every ``theta`` shifts by a constant, the
ridge also makes the fitted ``theta`` sum to zero. The objective is strictly convex; it is minimised
by Newton's method with the exact Hessian and Armijo backtracking. Reported log-strengths are then
centred exactly on their mean, or on a reference bot (``anchor``) when one is given.

Scale. ``rating = 400 / ln(10) * theta + 1500``: a 2-player game between ratings ``R_a`` and
``R_b`` is won by ``a`` with probability ``1 / (1 + 10 ** ((R_b - R_a) / 400))``, as in Elo.

Intervals. Percentile bootstrap over games (whole duplicate-dice groups when given) with the shared
helper :mod:`arena.ratings.bootstrap`: each replicate is the same fit with the game multiplicities as
weights, warm-started from the full fit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations

import numpy as np
import numpy.typing as npt

from arena.ratings.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    check_level,
    percentile_interval,
    resample_counts,
)
from arena.ratings.errors import RatingConvergenceError, RatingInputError
from arena.ratings.results import GameResult, bots_of, check_results, games_played

__all__ = [
    "PL_INITIAL",
    "PL_RIDGE",
    "PL_SCALE",
    "Estimate",
    "PLFit",
    "SeatKey",
    "fit_plackett_luce",
    "log_strength_to_rating",
    "pl_log_likelihood",
]

PL_SCALE = 400.0 / math.log(10.0)
"""Elo-like points per unit of log-strength (about 173.7)."""
PL_INITIAL = 1500.0
"""Rating of the reference point (the mean bot, or the anchor)."""
PL_RIDGE = 0.01
"""Default ridge: normal prior with sd 10 on every log-strength and seat term."""

_MAX_ITER = 100
_STEP_TOL = 1e-9
_QUADRATIC = 1e-6

SeatKey = tuple[int, int]
"""``(n_players, seat)``: a seat of a game of a given size."""


def log_strength_to_rating(theta: float) -> float:
    """Elo-like rating of a log-strength: ``400 / ln(10) * theta + 1500``."""
    return PL_SCALE * theta + PL_INITIAL


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its bootstrap interval (NaN bounds when there were no replicates)."""

    value: float
    lo: float
    hi: float


@dataclass(frozen=True, slots=True)
class PLFit:
    """Result of :func:`fit_plackett_luce`.

    Attributes:
        log_strength: per bot, centred log-strength (mean 0, or 0 for ``anchor``).
        ratings: per bot, the same on the Elo-like scale (:func:`log_strength_to_rating`).
        seat_advantage: per ``(n_players, seat)``, the additive log-strength of that seat relative to
            seat 0 of the same game size; seat 0 is listed as exactly 0. Empty without seat effects.
        games: games played per bot.
        anchor: the reference bot, or None for mean centring.
        n_resamples, seed, level: the bootstrap settings used.
        iterations: Newton iterations of the full-data fit.
        log_likelihood: log-likelihood of the full data at the fit (tie-averaged, without the ridge).
    """

    log_strength: dict[str, Estimate]
    ratings: dict[str, Estimate]
    seat_advantage: dict[SeatKey, Estimate]
    games: dict[str, int]
    anchor: str | None
    n_resamples: int
    seed: int
    level: float
    iterations: int
    log_likelihood: float

    def seat_advantage_elo(self, key: SeatKey) -> Estimate:
        """Seat advantage of ``key`` in Elo-like points (``400 / ln(10)`` per log-strength unit)."""
        est = self.seat_advantage[key]
        return Estimate(PL_SCALE * est.value, PL_SCALE * est.lo, PL_SCALE * est.hi)


@dataclass(frozen=True, slots=True)
class _Design:
    """Choice events compiled from the results.

    Parameters are ``x = [theta (bots), delta (seat keys)]`` plus one dummy slot at index ``n_params``
    that is always 0 (used for "no seat term" and for padding). Identical events (same chosen
    bot and seat, same choice set) are stored once as a *pattern*: pattern ``u`` chooses its first
    entry from the entries of its row where ``mask`` is set. With few bots, thousands of games
    reduce to a few hundred patterns, and every Newton iteration costs O(patterns).
    ``hess_index`` holds, for the four blocks (bot, bot), (bot, seat), (seat, bot), (seat, seat)
    of every pattern's entry pairs ``(j, k)`` (flat as ``(u * W + j) * W + k``), the pairs that
    touch no dummy and their flat index ``row * (n_params + 1) + col`` into the Hessian (with the
    dummy): fixed by the patterns, so computed once, not per iteration.
    """

    bots: list[str]
    seat_keys: list[SeatKey]
    game: npt.NDArray[np.intp]  # (E,) game of each event
    weight: npt.NDArray[np.float64]  # (E,) tie weight of each event
    pattern: npt.NDArray[np.intp]  # (E,) pattern of each event
    bot: npt.NDArray[np.intp]  # (U, W) parameter index of the bot term
    seat: npt.NDArray[np.intp]  # (U, W) parameter index of the seat term
    mask: npt.NDArray[np.bool_]  # (U, W) real entries of the choice set
    hess_index: tuple[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]], ...]  # 4 x (entries, flat index)

    @property
    def n_params(self) -> int:
        return len(self.bots) + len(self.seat_keys)


def _tie_events(tied: Sequence[int], below: Sequence[int]) -> list[tuple[int, list[int], float]]:
    """Choice events (chosen seat, choice set, weight) of a block of tied seats above ``below``."""
    t = len(tied)
    events = []
    for size in range(1, t + 1):
        weight = 1.0 / (math.comb(t, size) * size)
        for remaining in combinations(tied, size):
            choice_set = [*remaining, *below]
            if len(choice_set) < 2:
                continue  # a choice from one player carries no information
            for chosen in remaining:
                events.append((chosen, choice_set, weight))
    return events


def _game_events(
    game: GameResult, bot_index: dict[str, int], seat_index: dict[SeatKey, int], dummy: int, width: int
) -> tuple[list[list[int]], list[float]]:
    """One game's choice events: a flat row ``[bot, seat, bot, seat, ...]`` (chosen entry first,
    the rest sorted, padded with the dummy) and the tie weight of each."""
    n = game.n_players
    rows: list[list[int]] = []
    weights: list[float] = []
    for level in sorted(set(game.placings)):
        tied = [s for s in range(n) if game.placings[s] == level]
        below = [s for s in range(n) if game.placings[s] > level]
        for chosen, choice_set, weight in _tie_events(tied, below):
            entry = {s: (bot_index[game.players[s]], seat_index.get((n, s), dummy)) for s in choice_set}
            rest = sorted(entry[s] for s in choice_set if s != chosen)  # canonical: order is irrelevant
            row = [entry[chosen], *rest] + [(dummy, dummy)] * (width - len(choice_set))
            weights.append(weight)
            rows.append([index for pair in row for index in pair])
    return rows, weights


def _compile(games: Sequence[GameResult], seat_effects: bool) -> _Design:
    bots = bots_of(games)
    bot_index = {bot: i for i, bot in enumerate(bots)}
    seat_keys = (
        sorted({(g.n_players, s) for g in games for s in range(1, g.n_players)}) if seat_effects else []
    )
    seat_index = {key: len(bots) + i for i, key in enumerate(seat_keys)}
    dummy = len(bots) + len(seat_keys)
    width = max((g.n_players for g in games), default=2)
    # games with the same players in the same seats and the same placings have the same events:
    # compile each such kind once, then lay the events out game by game (a few hundred kinds)
    kinds: dict[tuple[tuple[str, ...], tuple[int, ...]], int] = {}
    rows: list[list[int]] = []
    weights: list[float] = []
    start: list[int] = []
    length: list[int] = []
    kind_of_game = np.empty(len(games), dtype=np.intp)
    for g, game in enumerate(games):
        key = (game.players, game.placings)
        kind = kinds.get(key)
        if kind is None:
            kind = kinds[key] = len(start)
            kind_rows, kind_weights = _game_events(game, bot_index, seat_index, dummy, width)
            start.append(len(weights))
            length.append(len(kind_weights))
            rows.extend(kind_rows)
            weights.extend(kind_weights)
        kind_of_game[g] = kind
    table = np.array(rows, dtype=np.intp).reshape(-1, 2 * width)
    patterns, inverse = np.unique(table, axis=0, return_inverse=True)
    per_game = np.array(length, dtype=np.intp)[kind_of_game]
    first_event = np.cumsum(per_game) - per_game
    # event e (in game order) is row start[kind] + (e - first event of its game) of the kinds' table
    source = np.repeat(np.array(start, dtype=np.intp)[kind_of_game] - first_event, per_game)
    source += np.arange(source.shape[0], dtype=np.intp)
    bot_arr = patterns[:, 0::2]
    seat_arr = patterns[:, 1::2]
    size = dummy + 1
    hess_index = []
    for r in (bot_arr, seat_arr):
        for c in (bot_arr, seat_arr):
            # entries that land on the dummy's row or column (padding, seat 0's missing seat
            # term) are dropped at the end anyway: leave them out (the others keep their order)
            keep = np.flatnonzero((r[:, :, None] != dummy) & (c[:, None, :] != dummy))
            hess_index.append((keep, (r[:, :, None] * size + c[:, None, :]).ravel()[keep]))
    return _Design(
        bots=bots,
        seat_keys=seat_keys,
        game=np.repeat(np.arange(len(games), dtype=np.intp), per_game),
        weight=np.array(weights, dtype=np.float64)[source],
        pattern=inverse.reshape(-1).astype(np.intp)[source],
        bot=bot_arr,
        seat=seat_arr,
        mask=bot_arr != dummy,
        hess_index=tuple(hess_index),
    )


@dataclass(frozen=True, slots=True)
class _Events:
    """Every pattern with its total weight under one set of game multiplicities (0 for a pattern
    none of whose games was drawn: it adds exact zeros, and keeping it keeps the arrays and the
    Hessian's indices of :class:`_Design` valid for every replicate)."""

    weight: npt.NDArray[np.float64]
    bot: npt.NDArray[np.intp]
    seat: npt.NDArray[np.intp]
    mask: npt.NDArray[np.bool_]
    hess_index: tuple[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]], ...]


def _select(design: _Design, multiplicity: npt.NDArray[np.floating] | None) -> _Events:
    per_event = design.weight if multiplicity is None else design.weight * multiplicity[design.game]
    weight = np.asarray(
        np.bincount(design.pattern, per_event, minlength=design.bot.shape[0]), dtype=np.float64
    )
    return _Events(weight, design.bot, design.seat, design.mask, design.hess_index)


def _probabilities(x_ext: npt.NDArray[np.float64], ev: _Events) -> tuple[npt.NDArray[np.float64], float]:
    """Choice probabilities per event entry, and the weighted log-likelihood."""
    strength = np.where(ev.mask, x_ext[ev.bot] + x_ext[ev.seat], -np.inf)
    # max and sum over the 2-4 entries of a row, column by column: numpy's reductions along a
    # short axis cost several times more; the sum is added left to right, as numpy's is below 8
    width = strength.shape[1]
    top = strength[:, :1].copy()
    for j in range(1, width):
        np.maximum(top, strength[:, j : j + 1], out=top)
    expd = np.exp(strength - top)
    total = expd[:, :1].copy()
    for j in range(1, width):
        total += expd[:, j : j + 1]
    prob = expd / total
    log_lik = float(np.dot(ev.weight, strength[:, 0] - top[:, 0] - np.log(total[:, 0])))
    return prob, log_lik


def _objective(x: npt.NDArray[np.float64], ev: _Events, ridge: float) -> float:
    _, log_lik = _probabilities(np.append(x, 0.0), ev)
    return -log_lik + 0.5 * ridge * float(np.dot(x, x))


@cache
def _outer_index(width: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``(j, k)`` of the flat entries ``j * width + k`` of a ``width x width`` block."""
    j, k = np.divmod(np.arange(width * width, dtype=np.intp), width)
    return j, k


def _gradient_hessian(
    x: npt.NDArray[np.float64], ev: _Events, ridge: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """Gradient and Hessian of the objective at ``x``, and its value."""
    n = x.shape[0]
    size = n + 1  # with the dummy parameter, dropped at the end
    prob, log_lik = _probabilities(np.append(x, 0.0), ev)
    w = ev.weight[:, None]
    d_strength = w * prob  # d(-log-lik)/d(strength of entry j) = w * (p_j - [j is chosen])
    d_strength[:, 0] -= ev.weight
    grad = np.bincount(ev.bot.ravel(), d_strength.ravel(), minlength=size)
    grad += np.bincount(ev.seat.ravel(), d_strength.ravel(), minlength=size)
    width = prob.shape[1]
    wp = w * prob
    # w * (diag(p) - p p^T), each pattern's (j, k) block flat as j * width + k: the products taken
    # from contiguous copies (a broadcast outer product over a width of 2-4 is several times slower)
    left, right = _outer_index(width)
    curv = np.take(wp, left, axis=1)
    curv *= np.take(prob, right, axis=1)
    np.negative(curv, out=curv)
    curv[:, :: width + 1] += wp
    flat = curv.ravel()
    hess = np.zeros(size * size)
    for entries, index in ev.hess_index:
        hess += np.bincount(index, flat[entries], minlength=size * size)
    hess_m = hess.reshape(size, size)[:n, :n] + ridge * np.eye(n)
    value = -log_lik + 0.5 * ridge * float(np.dot(x, x))
    return grad[:n] + ridge * x, hess_m, value


def _newton(x0: npt.NDArray[np.float64], ev: _Events, ridge: float) -> tuple[npt.NDArray[np.float64], int]:
    """Minimise the objective from ``x0``; returns the minimiser and the number of iterations.

    Damped Newton: backtrack until the Armijo condition holds, except once the Newton decrement
    ``g' H^-1 g`` is below ``_QUADRATIC`` (inside the region of quadratic convergence, where the
    objective's rounding noise would otherwise defeat the test). Stops when no coordinate of the
    Newton step exceeds ``_STEP_TOL``.
    """
    x = x0.copy()
    for iteration in range(1, _MAX_ITER + 1):
        grad, hess, value = _gradient_hessian(x, ev, ridge)
        step = np.linalg.solve(hess, -grad)
        if float(np.max(np.abs(step), initial=0.0)) < _STEP_TOL:
            return x, iteration
        slope = float(np.dot(grad, step))  # = -(Newton decrement), negative
        t = 1.0
        if -slope > _QUADRATIC:
            while _objective(x + t * step, ev, ridge) > value + 1e-4 * t * slope and t > 1e-10:
                t *= 0.5
        x = x + t * step
    raise RatingConvergenceError(f"Plackett-Luce Newton fit did not converge in {_MAX_ITER} iterations")


def pl_log_likelihood(
    results: Sequence[GameResult],
    log_strength: Mapping[str, float],
    seat_advantage: Mapping[SeatKey, float] | None = None,
) -> float:
    """Tie-averaged Plackett-Luce log-likelihood of ``results`` under given parameters.

    Args:
        results: the games.
        log_strength: log-strength of every bot that appears in ``results``.
        seat_advantage: additive term per ``(n_players, seat)``; missing keys (and seat 0) count as 0.

    Raises:
        RatingInputError: a bot of ``results`` has no log-strength, or an item is not a result.
    """
    games = check_results(results)
    if not games:
        return 0.0
    design = _compile(games, seat_effects=True)
    missing = [bot for bot in design.bots if bot not in log_strength]
    if missing:
        raise RatingInputError(f"no log-strength given for {missing!r}")
    seats = seat_advantage if seat_advantage is not None else {}
    x = np.array(
        [float(log_strength[bot]) for bot in design.bots]
        + [float(seats.get(key, 0.0)) for key in design.seat_keys]
        + [0.0]
    )
    _, log_lik = _probabilities(x, _select(design, None))
    return log_lik


def _centred(theta: npt.NDArray[np.float64], anchor: int | None) -> npt.NDArray[np.float64]:
    """Log-strengths relative to the mean of the finite entries, or to ``theta[anchor]``."""
    centre = float(np.nanmean(theta)) if anchor is None else float(theta[anchor])
    return theta - centre


def _canonical_key(game: GameResult) -> tuple[str, str, tuple[str, ...], tuple[int, ...], tuple[float, ...]]:
    """A total order on games that does not depend on the order they were given in."""
    return (game.group, game.game_id, game.players, game.placings, game.scores)


def fit_plackett_luce(
    results: Sequence[GameResult],
    *,
    ridge: float = PL_RIDGE,
    anchor: str | None = None,
    seat_effects: bool = True,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> PLFit:
    """Fit bot log-strengths and seat advantages to all games, with bootstrap intervals.

    Args:
        results: the games; their order changes nothing, the intervals included.
        ridge: strength of the ridge on all parameters (see module docstring); must be > 0.
        anchor: bot whose log-strength is fixed at 0 (rating 1500); default: the mean bot.
        seat_effects: estimate per-seat advantages (default) or assume seats are equal.
        n_resamples: bootstrap replicates; 0 gives NaN interval bounds.
        seed: bootstrap RNG seed; same inputs and seed give identical intervals.
        level: two-sided coverage of the percentile intervals.

    Returns:
        A :class:`PLFit`. In a replicate where a bot played no game its value is left out of that
        bot's percentiles; a replicate without the anchor is left out for everyone.

    Raises:
        RatingInputError: no games, an item is not a :class:`GameResult`, ``ridge`` not positive,
            ``anchor`` unknown, or bad bootstrap settings.
        RatingConvergenceError: the Newton iteration failed to converge (not expected: the problem
            is strictly convex).
    """
    games = check_results(results)
    if not games:
        raise RatingInputError("cannot fit a Plackett-Luce model to an empty result list")
    # the fit is a sum over games, so order cannot matter to it; the bootstrap's draws are made
    # per group in order of appearance, so the games are put in one canonical order first: the
    # same games in any order give the same intervals, to the last digit
    games = tuple(sorted(games, key=_canonical_key))
    if not (isinstance(ridge, int | float) and math.isfinite(ridge) and ridge > 0):
        raise RatingInputError(f"ridge must be a positive finite number, got {ridge!r}")
    check_level(level)
    counts = resample_counts(games, n_resamples, seed)
    design = _compile(games, seat_effects)
    n_bots = len(design.bots)
    if anchor is not None and anchor not in design.bots:
        raise RatingInputError(f"anchor {anchor!r} played no game")
    anchor_index = None if anchor is None else design.bots.index(anchor)

    full_events = _select(design, None)
    x_full, iterations = _newton(np.zeros(design.n_params), full_events, ridge)
    _, log_lik = _probabilities(np.append(x_full, 0.0), full_events)
    theta = _centred(x_full[:n_bots], anchor_index)
    seats = x_full[n_bots:]

    incidence = np.zeros((len(games), n_bots))
    bot_pos = {bot: i for i, bot in enumerate(design.bots)}
    sizes = np.fromiter((len(game.players) for game in games), dtype=np.intp, count=len(games))
    seat_bots = np.fromiter((bot_pos[b] for game in games for b in game.players), dtype=np.intp)
    incidence[np.repeat(np.arange(len(games)), sizes), seat_bots] = 1.0
    played = counts.astype(np.float64) @ incidence  # (replicates, bots): games played per replicate
    theta_reps = np.full((n_resamples, n_bots), np.nan)
    seat_reps = np.full((n_resamples, len(design.seat_keys)), np.nan)
    for r in range(n_resamples):
        x_rep, _ = _newton(x_full, _select(design, counts[r].astype(np.float64)), ridge)
        rep_theta = np.where(played[r] > 0, x_rep[:n_bots], np.nan)
        if anchor_index is not None and not played[r, anchor_index] > 0:
            continue
        theta_reps[r] = _centred(rep_theta, anchor_index)
        seat_reps[r] = x_rep[n_bots:]
    theta_lo, theta_hi = percentile_interval(theta_reps, level)
    seat_lo, seat_hi = percentile_interval(seat_reps, level)

    log_strength = {
        bot: Estimate(float(theta[i]), float(theta_lo[i]), float(theta_hi[i]))
        for i, bot in enumerate(design.bots)
    }
    ratings = {
        bot: Estimate(
            log_strength_to_rating(e.value), log_strength_to_rating(e.lo), log_strength_to_rating(e.hi)
        )
        for bot, e in log_strength.items()
    }
    seat_advantage: dict[SeatKey, Estimate] = {}
    for n_players in sorted({key[0] for key in design.seat_keys}):
        seat_advantage[(n_players, 0)] = Estimate(0.0, 0.0, 0.0)
    for j, key in enumerate(design.seat_keys):
        seat_advantage[key] = Estimate(float(seats[j]), float(seat_lo[j]), float(seat_hi[j]))
    return PLFit(
        log_strength=log_strength,
        ratings=ratings,
        seat_advantage=dict(sorted(seat_advantage.items())),
        games=games_played(games),
        anchor=anchor,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
        iterations=iterations,
        log_likelihood=log_lik,
    )
