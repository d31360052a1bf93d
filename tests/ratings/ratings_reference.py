"""The rating code as it was before the refit was made fast (commit 1429095991), kept verbatim as the
reference the fast paths are pinned to (tests/ratings/test_ratings_fast_paths.py): sequential Elo
and its bootstrap replicates, the Plackett-Luce fit with its bootstrap, and the OpenSkill update.
Test helper, not a test module; not used by the arena."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from arena.ratings import GameResult, OpenSkillParams, Skill
from arena.ratings.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    check_level,
    percentile_interval,
    replicate_order,
    resample_counts,
)
from arena.ratings.elo import ELO_INITIAL, ELO_K, ELO_SCALE, EloRatings, pair_score
from arena.ratings.errors import RatingConvergenceError, RatingInputError
from arena.ratings.openskill import OpenSkillRatings
from arena.ratings.plackett_luce import PL_RIDGE, Estimate, PLFit, SeatKey, log_strength_to_rating
from arena.ratings.results import bots_of, check_results, games_played


def expected_score(rating: float, opponent: float, scale: float = ELO_SCALE) -> float:
    """Expected pairwise score of ``rating`` against ``opponent`` (0..1; 0.5 when equal)."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / scale))


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


_MAX_ITER = 100
_STEP_TOL = 1e-9
_QUADRATIC = 1e-6


@dataclass(frozen=True, slots=True)
class _Design:
    """Choice events compiled from the results.

    Parameters are ``x = [theta (bots), delta (seat keys)]`` plus one dummy slot at index ``n_params``
    that is always 0 (used for "no seat term" and for padding). Identical events (same chosen
    bot and seat, same choice set) are stored once as a *pattern*: pattern ``u`` chooses its first
    entry from the entries of its row where ``mask`` is set. With few bots, thousands of games
    reduce to a few hundred patterns, and every Newton iteration costs O(patterns).
    """

    bots: list[str]
    seat_keys: list[SeatKey]
    game: npt.NDArray[np.intp]  # (E,) game of each event
    weight: npt.NDArray[np.float64]  # (E,) tie weight of each event
    pattern: npt.NDArray[np.intp]  # (E,) pattern of each event
    bot: npt.NDArray[np.intp]  # (U, W) parameter index of the bot term
    seat: npt.NDArray[np.intp]  # (U, W) parameter index of the seat term
    mask: npt.NDArray[np.bool_]  # (U, W) real entries of the choice set

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


def _compile(games: Sequence[GameResult], seat_effects: bool) -> _Design:
    bots = bots_of(games)
    bot_index = {bot: i for i, bot in enumerate(bots)}
    seat_keys = (
        sorted({(g.n_players, s) for g in games for s in range(1, g.n_players)}) if seat_effects else []
    )
    seat_index = {key: len(bots) + i for i, key in enumerate(seat_keys)}
    dummy = len(bots) + len(seat_keys)
    width = max((g.n_players for g in games), default=2)
    ev_game: list[int] = []
    ev_weight: list[float] = []
    rows: list[list[int]] = []
    for g, game in enumerate(games):
        n = game.n_players
        for level in sorted(set(game.placings)):
            tied = [s for s in range(n) if game.placings[s] == level]
            below = [s for s in range(n) if game.placings[s] > level]
            for chosen, choice_set, weight in _tie_events(tied, below):
                entry = {s: (bot_index[game.players[s]], seat_index.get((n, s), dummy)) for s in choice_set}
                rest = sorted(entry[s] for s in choice_set if s != chosen)  # canonical: order is irrelevant
                row = [entry[chosen], *rest] + [(dummy, dummy)] * (width - len(choice_set))
                ev_game.append(g)
                ev_weight.append(weight)
                rows.append([index for pair in row for index in pair])
    table = np.array(rows, dtype=np.intp).reshape(-1, 2 * width)
    patterns, inverse = np.unique(table, axis=0, return_inverse=True)
    bot_arr = patterns[:, 0::2]
    return _Design(
        bots=bots,
        seat_keys=seat_keys,
        game=np.array(ev_game, dtype=np.intp),
        weight=np.array(ev_weight, dtype=np.float64),
        pattern=inverse.reshape(-1).astype(np.intp),
        bot=bot_arr,
        seat=patterns[:, 1::2],
        mask=bot_arr != dummy,
    )


@dataclass(frozen=True, slots=True)
class _Events:
    """The patterns with non-zero total weight under one set of game multiplicities."""

    weight: npt.NDArray[np.float64]
    bot: npt.NDArray[np.intp]
    seat: npt.NDArray[np.intp]
    mask: npt.NDArray[np.bool_]


def _select(design: _Design, multiplicity: npt.NDArray[np.floating] | None) -> _Events:
    per_event = design.weight if multiplicity is None else design.weight * multiplicity[design.game]
    weight = np.asarray(
        np.bincount(design.pattern, per_event, minlength=design.bot.shape[0]), dtype=np.float64
    )
    keep = weight > 0
    return _Events(weight[keep], design.bot[keep], design.seat[keep], design.mask[keep])


def _probabilities(x_ext: npt.NDArray[np.float64], ev: _Events) -> tuple[npt.NDArray[np.float64], float]:
    """Choice probabilities per event entry, and the weighted log-likelihood."""
    strength = np.where(ev.mask, x_ext[ev.bot] + x_ext[ev.seat], -np.inf)
    top = strength.max(axis=1, keepdims=True)
    expd = np.exp(strength - top)
    total = expd.sum(axis=1, keepdims=True)
    prob = expd / total
    log_lik = float(np.dot(ev.weight, strength[:, 0] - top[:, 0] - np.log(total[:, 0])))
    return prob, log_lik


def _objective(x: npt.NDArray[np.float64], ev: _Events, ridge: float) -> float:
    _, log_lik = _probabilities(np.append(x, 0.0), ev)
    return -log_lik + 0.5 * ridge * float(np.dot(x, x))


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
    curv = -(w * prob)[:, :, None] * prob[:, None, :]  # w * (diag(p) - p p^T)
    diag = np.arange(width)
    curv[:, diag, diag] += w * prob
    flat = curv.ravel()
    hess = np.zeros(size * size)
    for rows in (ev.bot, ev.seat):
        for cols in (ev.bot, ev.seat):
            index = (rows[:, :, None] * size + cols[:, None, :]).ravel()
            hess += np.bincount(index, flat, minlength=size * size)
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


def _centred(theta: npt.NDArray[np.float64], anchor: int | None) -> npt.NDArray[np.float64]:
    """Log-strengths relative to the mean of the finite entries, or to ``theta[anchor]``."""
    centre = float(np.nanmean(theta)) if anchor is None else float(theta[anchor])
    return theta - centre


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
        results: the games (order does not matter).
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
    for g, game in enumerate(games):
        incidence[g, [bot_pos[b] for b in game.players]] = 1.0
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


def plackett_luce_update(
    skills: Sequence[Skill], placings: Sequence[int], params: OpenSkillParams | None = None
) -> list[Skill]:
    """Posterior skills after one game, seat order in and out (formulas in the module docstring).

    Raises:
        RatingInputError: fewer than two seats or ``skills`` and ``placings`` differ in length.
    """
    p = params if params is not None else OpenSkillParams()
    n = len(skills)
    if n < 2 or len(placings) != n:
        raise RatingInputError(
            f"need one placing per seat and >= 2 seats, got {n} skills, {len(placings)} placings"
        )
    var = [s.sigma * s.sigma + p.tau * p.tau for s in skills]
    c = math.sqrt(sum(v + p.beta * p.beta for v in var))
    top = max(s.mu for s in skills) / c  # shift the exponents: ratios are unchanged, overflow is not
    e = [math.exp(s.mu / c - top) for s in skills]
    tail = [sum(e[s] for s in range(n) if placings[s] >= placings[q]) for q in range(n)]
    tied = [sum(1 for s in range(n) if placings[s] == placings[q]) for q in range(n)]
    out = []
    for i, skill in enumerate(skills):
        omega = 0.0
        delta = 0.0
        for q in range(n):
            if placings[q] <= placings[i]:
                prob = e[i] / tail[q]
                omega += ((1.0 if q == i else 0.0) - prob) / tied[q]
                delta += prob * (1.0 - prob) / tied[q]
        gamma = math.sqrt(var[i]) / c
        mu = skill.mu + var[i] / c * omega
        new_var = var[i] * max(1.0 - gamma * var[i] / (c * c) * delta, p.kappa)
        out.append(Skill(mu=mu, sigma=math.sqrt(new_var)))
    return out


def openskill_ratings(
    results: Sequence[GameResult], params: OpenSkillParams | None = None
) -> OpenSkillRatings:
    """Apply :func:`plackett_luce_update` to every game in list order, from the prior ``(mu, sigma)``.

    Raises:
        RatingInputError: an item is not a :class:`GameResult`.
    """
    p = params if params is not None else OpenSkillParams()
    games = check_results(results)
    prior = Skill(mu=float(p.mu), sigma=float(p.sigma))
    ratings: dict[str, Skill] = {}
    for game in games:
        before = [ratings.get(bot, prior) for bot in game.players]
        for bot, after in zip(game.players, plackett_luce_update(before, game.placings, p), strict=True):
            ratings[bot] = after
    return OpenSkillRatings(ratings=ratings, games=games_played(games), params=p)
