"""Batch Plackett-Luce fit: likelihood, ties, optimiser, recovery of known strengths, bootstrap."""

from __future__ import annotations

import math
import random
from itertools import permutations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ratings_synth import SEAT0_BONUS, TRUE_STRENGTHS, synthetic_games

from arena.ratings import (
    PL_SCALE,
    GameResult,
    PLFit,
    RatingInputError,
    fit_plackett_luce,
    log_strength_to_rating,
    pl_log_likelihood,
)
from arena.ratings import plackett_luce as pl

TRUE_CENTRED = {
    bot: v - sum(TRUE_STRENGTHS.values()) / len(TRUE_STRENGTHS) for bot, v in TRUE_STRENGTHS.items()
}
TRUE_SEATS = {(2, 1): -SEAT0_BONUS, (4, 1): -SEAT0_BONUS, (4, 2): -SEAT0_BONUS, (4, 3): -SEAT0_BONUS}


@pytest.fixture(scope="module")
def fit_3000() -> PLFit:
    return fit_plackett_luce(synthetic_games(3000, seed=11))


def _strict_order_log_lik(strength: list[float], order: list[int]) -> float:
    total = 0.0
    for k, seat in enumerate(order):
        rest = order[k:]
        total += strength[seat] - math.log(sum(math.exp(strength[s]) for s in rest))
    return total


def _brute_force_log_lik(
    game: GameResult, theta: dict[str, float], seats: dict[tuple[int, int], float]
) -> float:
    """Average PL log-likelihood over every strict order that breaks the ties."""
    n = game.n_players
    strength = [theta[b] + seats.get((n, s), 0.0) for s, b in enumerate(game.players)]
    blocks = [[s for s in range(n) if game.placings[s] == p] for p in sorted(set(game.placings))]
    orders = [
        [s for block in choice for s in block] for choice in product(*(permutations(b) for b in blocks))
    ]
    return sum(_strict_order_log_lik(strength, o) for o in orders) / len(orders)


@pytest.mark.parametrize(
    "placings", [(1, 2, 3, 4), (1, 1, 3, 4), (1, 2, 2, 2), (1, 1, 1, 1), (2, 1, 2, 4), (1, 1, 3, 3)]
)
def test_tie_expansion_equals_average_over_tie_breaking_orders(placings: tuple[int, ...]) -> None:
    game = GameResult(("a", "b", "c", "d"), placings, (0.0,) * 4)
    theta = {"a": 0.7, "b": -0.2, "c": 0.1, "d": -0.9}
    seats = {(4, 1): -0.3, (4, 2): 0.2, (4, 3): -0.1}
    assert pl_log_likelihood([game], theta, seats) == pytest.approx(_brute_force_log_lik(game, theta, seats))


def test_two_player_draw_is_half_a_win_and_half_a_loss() -> None:
    theta = {"a": 0.4, "b": -0.1}
    draw = pl_log_likelihood([GameResult(("a", "b"), (1, 1), (0.0, 0.0))], theta)
    win = pl_log_likelihood([GameResult(("a", "b"), (1, 2), (0.0, 0.0))], theta)
    loss = pl_log_likelihood([GameResult(("a", "b"), (2, 1), (0.0, 0.0))], theta)
    assert draw == pytest.approx((win + loss) / 2)


def test_log_likelihood_needs_every_bot() -> None:
    with pytest.raises(RatingInputError, match="no log-strength"):
        pl_log_likelihood([GameResult(("a", "b"), (1, 2), (0.0, 0.0))], {"a": 0.0})


def test_gradient_and_hessian_match_finite_differences() -> None:
    games = synthetic_games(60, seed=4)
    games.append(GameResult(("alpha", "bravo", "charlie", "delta"), (1, 1, 3, 3), (0.0,) * 4))
    design = pl._compile(games, seat_effects=True)
    events = pl._select(design, np.arange(len(games), dtype=np.float64) % 3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=design.n_params)
    grad, hess, value = pl._gradient_hessian(x, events, 0.01)
    assert value == pytest.approx(pl._objective(x, events, 0.01))
    h = 1e-6
    for i in range(design.n_params):
        e = np.zeros_like(x)
        e[i] = h
        numeric = (pl._objective(x + e, events, 0.01) - pl._objective(x - e, events, 0.01)) / (2 * h)
        assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-5)
        g_plus, _, _ = pl._gradient_hessian(x + e, events, 0.01)
        g_minus, _, _ = pl._gradient_hessian(x - e, events, 0.01)
        assert hess[:, i] == pytest.approx((g_plus - g_minus) / (2 * h), rel=1e-4, abs=1e-4)


def test_fit_is_a_stationary_point_with_mean_zero() -> None:
    games = synthetic_games(400, seed=5)
    fit = fit_plackett_luce(games, n_resamples=0)
    theta = {b: e.value for b, e in fit.log_strength.items()}
    seats = {k: e.value for k, e in fit.seat_advantage.items()}
    assert sum(theta.values()) == pytest.approx(0.0, abs=1e-9)
    best = pl_log_likelihood(games, theta, seats)
    assert best == pytest.approx(fit.log_likelihood)
    for bot in theta:
        for step in (-0.05, 0.05):
            nudged = dict(theta, **{bot: theta[bot] + step})
            assert pl_log_likelihood(games, nudged, seats) < best
    assert math.isnan(fit.ratings["alpha"].lo)


def test_recovers_known_strengths_and_seat_advantage(fit_3000: PLFit) -> None:
    fitted = fit_3000.log_strength
    assert sorted(fitted, key=lambda b: -fitted[b].value) == ["alpha", "bravo", "charlie", "delta"]
    inside = 0
    for bot, truth in TRUE_CENTRED.items():
        est = fitted[bot]
        assert est.lo < est.value < est.hi
        half = (est.hi - est.lo) / 2
        assert est.lo - half <= truth <= est.hi + half, (bot, truth, est)
        inside += est.lo <= truth <= est.hi
    for key, truth in TRUE_SEATS.items():
        est = fit_3000.seat_advantage[key]
        assert est.value < 0 and est.hi < 0.05, (key, est)
        half = (est.hi - est.lo) / 2
        assert est.lo - half <= truth <= est.hi + half, (key, truth, est)
        inside += est.lo <= truth <= est.hi
    assert inside >= 5  # of 8 nominal 95% intervals (30 seeds: coverage 94%, never fewer than 5)
    assert fit_3000.seat_advantage[(2, 0)] == pl.Estimate(0.0, 0.0, 0.0)
    assert fit_3000.seat_advantage[(4, 0)] == pl.Estimate(0.0, 0.0, 0.0)


def test_ratings_are_log_strengths_on_the_elo_scale(fit_3000: PLFit) -> None:
    for bot, est in fit_3000.log_strength.items():
        rating = fit_3000.ratings[bot]
        assert rating.value == pytest.approx(400 / math.log(10) * est.value + 1500)
        assert (rating.lo, rating.hi) == pytest.approx(
            (log_strength_to_rating(est.lo), log_strength_to_rating(est.hi))
        )
    assert fit_3000.seat_advantage_elo((4, 1)).value == pytest.approx(
        PL_SCALE * fit_3000.seat_advantage[(4, 1)].value
    )
    assert fit_3000.games["alpha"] > 2000


def test_intervals_shrink_as_games_grow(fit_3000: PLFit) -> None:
    small = fit_plackett_luce(synthetic_games(300, seed=11))

    def width(f: PLFit, bot: str) -> float:
        return f.log_strength[bot].hi - f.log_strength[bot].lo

    for bot in TRUE_STRENGTHS:
        assert width(fit_3000, bot) < 0.6 * width(small, bot)
    assert fit_3000.seat_advantage[(4, 1)].hi - fit_3000.seat_advantage[(4, 1)].lo < 0.6 * (
        small.seat_advantage[(4, 1)].hi - small.seat_advantage[(4, 1)].lo
    )


def test_reproducible_with_the_same_seed() -> None:
    games = synthetic_games(200, seed=8)
    first = fit_plackett_luce(games, n_resamples=40, seed=3)
    assert fit_plackett_luce(games, n_resamples=40, seed=3) == first
    other = fit_plackett_luce(games, n_resamples=40, seed=4)
    assert other.log_strength["alpha"].value == first.log_strength["alpha"].value
    assert other.log_strength["alpha"].lo != first.log_strength["alpha"].lo


def test_grouped_bootstrap_is_wider_for_correlated_groups() -> None:
    # Each group repeats one game outcome 4 times (perfectly correlated duplicates): resampling
    # single games would understate the uncertainty, resampling groups must not.
    base = synthetic_games(150, seed=9, sizes=(2,))
    dup = [
        GameResult(g.players, g.placings, g.scores, f"{g.game_id}-{k}", group=g.game_id)
        for g in base
        for k in range(4)
    ]
    loose = [GameResult(g.players, g.placings, g.scores, g.game_id) for g in dup]
    grouped = fit_plackett_luce(dup, n_resamples=100, seed=1)
    ungrouped = fit_plackett_luce(loose, n_resamples=100, seed=1)
    for bot in TRUE_STRENGTHS:
        w_grouped = grouped.log_strength[bot].hi - grouped.log_strength[bot].lo
        w_loose = ungrouped.log_strength[bot].hi - ungrouped.log_strength[bot].lo
        assert w_grouped > 1.5 * w_loose


def test_bot_that_never_loses_stays_finite() -> None:
    games = [GameResult(("champ", "b"), (1, 2), (1.0, 0.0)) for _ in range(20)]
    games += [GameResult(("b", "c"), (1 + i % 2, 2 - i % 2), (0.0, 0.0)) for i in range(20)]
    fit = fit_plackett_luce(games, n_resamples=20)
    champ = fit.log_strength["champ"]
    assert math.isfinite(champ.value) and math.isfinite(champ.hi)
    assert champ.value > fit.log_strength["b"].value + 2


def test_anchor_fixes_the_reference_bot() -> None:
    games = synthetic_games(300, seed=2)
    free = fit_plackett_luce(games, n_resamples=0)
    anchored = fit_plackett_luce(games, anchor="charlie", n_resamples=30)
    assert anchored.log_strength["charlie"].value == 0.0
    assert anchored.ratings["charlie"].value == 1500.0
    assert anchored.log_strength["charlie"].lo == anchored.log_strength["charlie"].hi == 0.0
    shift = free.log_strength["charlie"].value
    for bot, est in free.log_strength.items():
        assert anchored.log_strength[bot].value == pytest.approx(est.value - shift)
    with pytest.raises(RatingInputError, match="anchor"):
        fit_plackett_luce(games, anchor="nobody", n_resamples=0)


def test_without_seat_effects() -> None:
    fit = fit_plackett_luce(synthetic_games(300, seed=2, seat0_bonus=0.0), seat_effects=False, n_resamples=0)
    assert fit.seat_advantage == {}
    assert fit.log_strength["alpha"].value > fit.log_strength["delta"].value


def test_bot_absent_from_some_replicates_gets_an_interval_from_the_others() -> None:
    games = [*synthetic_games(100, seed=1, sizes=(2,)), GameResult(("rare", "alpha"), (2, 1), (0.0, 1.0))]
    fit = fit_plackett_luce(games, n_resamples=50)
    rare = fit.log_strength["rare"]
    assert math.isfinite(rare.lo) and rare.lo <= rare.hi


@pytest.mark.parametrize(
    "kwargs", [{"ridge": 0.0}, {"ridge": -1.0}, {"level": 0.0}, {"n_resamples": -2}, {"ridge": math.nan}]
)
def test_bad_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(RatingInputError):
        fit_plackett_luce(synthetic_games(10, seed=0), **kwargs)  # type: ignore[arg-type]


def test_empty_input() -> None:
    with pytest.raises(RatingInputError, match="empty"):
        fit_plackett_luce([])


NAMES = ["n0", "n1", "n2", "n3", "n4"]


@st.composite
def small_tournaments(draw: st.DrawFn) -> list[GameResult]:
    games = []
    for g in range(draw(st.integers(min_value=1, max_value=15))):
        n = draw(st.integers(min_value=2, max_value=4))
        players = draw(st.permutations(NAMES))[:n]
        scores = draw(st.lists(st.integers(min_value=0, max_value=3), min_size=n, max_size=n))
        games.append(GameResult.from_scores(players, [float(s) for s in scores], game_id=f"g{g}"))
    return games


@settings(max_examples=30, deadline=None)
@given(small_tournaments(), st.permutations(NAMES))
def test_fit_is_invariant_to_relabelling_bots(games: list[GameResult], new_names: list[str]) -> None:
    rename = {old: f"bot-{new}" for old, new in zip(NAMES, new_names, strict=True)}
    renamed = [
        GameResult(tuple(rename[b] for b in g.players), g.placings, g.scores, g.game_id) for g in games
    ]
    original = fit_plackett_luce(games, n_resamples=0)
    relabelled = fit_plackett_luce(renamed, n_resamples=0)
    for bot, est in original.log_strength.items():
        assert relabelled.log_strength[rename[bot]].value == pytest.approx(est.value, abs=1e-6)
    for key, est in original.seat_advantage.items():
        assert relabelled.seat_advantage[key].value == pytest.approx(est.value, abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(small_tournaments())
def test_fit_is_invariant_to_game_order(games: list[GameResult]) -> None:
    forward = fit_plackett_luce(games, n_resamples=0)
    backward = fit_plackett_luce(list(reversed(games)), n_resamples=0)
    for bot, est in forward.log_strength.items():
        assert backward.log_strength[bot].value == pytest.approx(est.value, abs=1e-6)


@settings(max_examples=20, deadline=None)
@given(small_tournaments(), st.randoms(use_true_random=False), st.integers(min_value=0, max_value=3))
def test_intervals_are_invariant_to_game_order(
    games: list[GameResult], shuffler: random.Random, n_groups: int
) -> None:
    """The contract says order does not matter: the bootstrap bounds too, to the last digit (the
    store rates one tournament in schedule order and all matches in finishing order)."""
    grouped = [
        GameResult(g.players, g.placings, g.scores, g.game_id, f"seed{i % n_groups}" if n_groups else "")
        for i, g in enumerate(games)
    ]
    shuffled = list(grouped)
    shuffler.shuffle(shuffled)
    one = fit_plackett_luce(grouped, n_resamples=20)
    other = fit_plackett_luce(shuffled, n_resamples=20)
    assert one.ratings == other.ratings
    assert one.seat_advantage == other.seat_advantage
