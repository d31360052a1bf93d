"""The rate() dispatcher and its Rating rows."""

from __future__ import annotations

import math

import pytest
from ratings_synth import synthetic_games

from arena.ratings import (
    GameResult,
    Rating,
    RatingInputError,
    UnknownRatingSystemError,
    elo_ratings,
    openskill_ratings,
    rate,
    system_names,
)

GAMES = synthetic_games(400, seed=21)


@pytest.mark.parametrize("system", system_names())
def test_rows_sorted_best_first_with_intervals(system: str) -> None:
    rows = rate(GAMES, system, n_resamples=50)
    assert [row.bot for row in rows] == ["alpha", "bravo", "charlie", "delta"]
    assert [row.conservative for row in rows] == sorted((row.conservative for row in rows), reverse=True)
    for row in rows:
        assert isinstance(row, Rating) and row.system == system
        assert row.lo < row.rating < row.hi
        assert row.games == sum(row.bot in g.players for g in GAMES)


def test_elo_rows_use_sequential_elo_point_and_bootstrap_interval() -> None:
    rows = {row.bot: row for row in rate(GAMES, "elo", n_resamples=30, seed=2)}
    point = elo_ratings(GAMES).ratings
    assert {bot: row.rating for bot, row in rows.items()} == point
    again = {row.bot: row for row in rate(GAMES, "elo", n_resamples=30, seed=2)}
    assert again == rows


def test_openskill_rows_are_mu_plus_minus_1_96_sigma() -> None:
    skills = openskill_ratings(GAMES).ratings
    for row in rate(GAMES, "openskill"):
        s = skills[row.bot]
        assert row.rating == s.mu
        assert row.lo == pytest.approx(s.mu - 1.959964 * s.sigma)
        assert row.hi == pytest.approx(s.mu + 1.959964 * s.sigma)
        assert row.ordinal == pytest.approx(s.mu - 3 * s.sigma)


def test_pl_rows_centre_on_1500() -> None:
    rows = rate(GAMES, "pl", n_resamples=20)
    assert sum(row.rating for row in rows) / len(rows) == pytest.approx(1500.0)
    assert all(row.ordinal is None for row in rows)


def test_no_resamples_gives_nan_intervals() -> None:
    for system in ("elo", "pl"):
        row = rate(GAMES[:20], system, n_resamples=0)[0]
        assert math.isnan(row.lo) and math.isnan(row.hi)


@pytest.mark.parametrize("system", system_names())
def test_empty_results_rate_nobody(system: str) -> None:
    assert rate([], system) == []


def test_unknown_system() -> None:
    with pytest.raises(UnknownRatingSystemError, match="trueskill"):
        rate(GAMES, "trueskill")


def test_bad_level_and_bad_items() -> None:
    with pytest.raises(RatingInputError):
        rate(GAMES, "openskill", level=1.5)
    with pytest.raises(RatingInputError):
        rate([*GAMES[:2], "not a game"], "elo")  # type: ignore[list-item]


def test_ties_broken_by_bot_id() -> None:
    rows = rate([GameResult(("b", "a"), (1, 1), (0.0, 0.0))], "openskill")
    assert [row.bot for row in rows] == ["a", "b"]


def test_an_interval_narrower_than_the_last_shown_digit_is_not_shown() -> None:
    from arena.ratings.rating import shown_interval

    assert shown_interval(2286.2, 2286.9, 0) == (None, None)  # printed as 2286-2287 before
    assert shown_interval(1500.0, 1500.4, 0) == (None, None)
    assert shown_interval(1500.0, 1501.0, 0) == (1500.0, 1501.0)
    assert shown_interval(24.95, 25.04, 2) == (24.95, 25.04)
    assert shown_interval(24.951, 24.954, 2) == (None, None)
    assert shown_interval(float("nan"), 3.0, 0) == (None, None)
    assert shown_interval(None, 3.0, 0) == (None, None)
    assert shown_interval(1.0, float("inf"), 0) == (None, None)
