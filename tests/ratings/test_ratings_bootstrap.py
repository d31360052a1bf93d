"""The shared bootstrap helper."""

from __future__ import annotations

import numpy as np
import pytest

from arena.ratings import GameResult, RatingInputError, percentile_interval, replicate_order, resample_counts


def _games(groups: list[str]) -> list[GameResult]:
    return [
        GameResult(("a", "b"), (1, 2), (1.0, 0.0), game_id=f"g{i}", group=g) for i, g in enumerate(groups)
    ]


def test_counts_shape_and_total_without_groups() -> None:
    counts = resample_counts(_games([""] * 7), n_resamples=50, seed=1)
    assert counts.shape == (50, 7)
    assert (counts.sum(axis=1) == 7).all()


def test_groups_are_drawn_whole() -> None:
    groups = ["x", "x", "x", "y", "y", "y", "", "z", "z", "z"]
    counts = resample_counts(_games(groups), n_resamples=100, seed=2)
    for members in ([0, 1, 2], [3, 4, 5], [7, 8, 9]):
        assert (counts[:, members] == counts[:, members[:1]]).all()
    # 4 groups drawn per replicate: total games = 3 * (draws of x, y, z) + draws of the lone game
    per_group = counts[:, [0, 3, 6, 7]]
    assert (per_group.sum(axis=1) == 4).all()


def test_non_contiguous_group_members_stay_together() -> None:
    counts = resample_counts(_games(["x", "", "x"]), n_resamples=40, seed=3)
    assert (counts[:, 0] == counts[:, 2]).all()


def test_same_seed_same_counts_and_other_seed_differs() -> None:
    games = _games([""] * 30)
    assert (resample_counts(games, 20, seed=5) == resample_counts(games, 20, seed=5)).all()
    assert (resample_counts(games, 20, seed=5) != resample_counts(games, 20, seed=6)).any()


def test_bad_resample_count() -> None:
    with pytest.raises(RatingInputError):
        resample_counts(_games([""]), n_resamples=-1)
    assert resample_counts(_games([""]), n_resamples=0).shape == (0, 1)


def test_replicate_order_keeps_original_order() -> None:
    assert replicate_order(np.array([0, 3, 1, 0, 2])).tolist() == [1, 1, 1, 2, 4, 4]


def test_percentile_interval_ignores_nan_and_handles_empty_columns() -> None:
    samples = np.array([[1.0, np.nan], [2.0, np.nan], [3.0, np.nan], [np.nan, np.nan]])
    lo, hi = percentile_interval(samples, level=0.5)
    assert lo[0] == pytest.approx(1.5) and hi[0] == pytest.approx(2.5)
    assert np.isnan(lo[1]) and np.isnan(hi[1])
    lo, hi = percentile_interval(np.empty((0, 2)))
    assert np.isnan(lo).all() and np.isnan(hi).all()
    with pytest.raises(RatingInputError):
        percentile_interval(samples, level=1.0)
