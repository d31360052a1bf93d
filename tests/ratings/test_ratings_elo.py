"""Pairwise multiplayer Elo and the share-to-Elo report."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import (
    ELO_INITIAL,
    ELO_K,
    GameResult,
    RatingInputError,
    elo_diff_from_share,
    elo_game_deltas,
    elo_ratings,
    elo_replicates,
    expected_score,
    resample_counts,
    share_from_elo_diff,
)

BOTS = ["a", "b", "c", "d", "e"]


@st.composite
def game_lists(draw: st.DrawFn, max_games: int = 12) -> list[GameResult]:
    games = []
    for g in range(draw(st.integers(min_value=0, max_value=max_games))):
        n = draw(st.integers(min_value=2, max_value=4))
        players = draw(st.permutations(BOTS))[:n]
        scores = draw(st.lists(st.integers(min_value=0, max_value=3), min_size=n, max_size=n))
        games.append(GameResult.from_scores(players, [float(s) for s in scores], game_id=f"g{g}"))
    return games


def test_two_player_win_with_equal_ratings_moves_k_over_two() -> None:
    result = elo_ratings([GameResult(("w", "l"), (1, 2), (1.0, 0.0))])
    assert result.ratings["w"] == pytest.approx(ELO_INITIAL + ELO_K / 2)
    assert result.ratings["l"] == pytest.approx(ELO_INITIAL - ELO_K / 2)
    assert result.games == {"w": 1, "l": 1}


def test_custom_k_scale_and_initial() -> None:
    result = elo_ratings([GameResult(("w", "l"), (1, 2), (1.0, 0.0))], k=32, scale=200, initial=1000)
    assert result.ratings == {"w": pytest.approx(1016), "l": pytest.approx(984)}


def test_draw_between_equals_changes_nothing() -> None:
    result = elo_ratings([GameResult(("a", "b"), (1, 1), (0.0, 0.0))])
    assert result.ratings == {"a": pytest.approx(ELO_INITIAL), "b": pytest.approx(ELO_INITIAL)}


def test_four_player_game_moves_like_one_two_player_game() -> None:
    result = elo_ratings([GameResult(("a", "b", "c", "d"), (1, 2, 3, 4), (4.0, 3.0, 2.0, 1.0))])
    # winner beats 3 opponents: K/3 * 3 * 0.5 = K/2; second: K/3 * (0.5 + 0.5 - 0.5) = K/6
    assert result.ratings["a"] == pytest.approx(ELO_INITIAL + ELO_K / 2)
    assert result.ratings["b"] == pytest.approx(ELO_INITIAL + ELO_K / 6)
    assert result.ratings["c"] == pytest.approx(ELO_INITIAL - ELO_K / 6)
    assert result.ratings["d"] == pytest.approx(ELO_INITIAL - ELO_K / 2)


def test_symmetric_in_seat_order() -> None:
    forward = elo_ratings([GameResult(("a", "b", "c"), (2, 1, 3), (1.0, 2.0, 0.0))])
    backward = elo_ratings([GameResult(("c", "b", "a"), (3, 1, 2), (0.0, 2.0, 1.0))])
    assert forward.ratings == pytest.approx(backward.ratings)


def test_expected_score_is_symmetric() -> None:
    assert expected_score(1600, 1400) + expected_score(1400, 1600) == pytest.approx(1.0)
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)


@given(game_lists())
def test_zero_sum_per_game_and_mean_preserved(games: list[GameResult]) -> None:
    for game in games:
        before = [1400.0 + 37.0 * i for i in range(game.n_players)]
        assert sum(elo_game_deltas(before, game.placings)) == pytest.approx(0.0, abs=1e-9)
    result = elo_ratings(games)
    if result.ratings:
        assert sum(result.ratings.values()) / len(result.ratings) == pytest.approx(ELO_INITIAL)


@given(game_lists())
def test_relabelling_bots_relabels_ratings(games: list[GameResult]) -> None:
    rename = {bot: f"x{bot}" for bot in BOTS}
    renamed = [
        GameResult(tuple(rename[b] for b in g.players), g.placings, g.scores, g.game_id, g.group)
        for g in games
    ]
    original = elo_ratings(games).ratings
    relabelled = elo_ratings(renamed).ratings
    assert {rename[b]: r for b, r in original.items()} == pytest.approx(relabelled)


@settings(max_examples=40, deadline=None)
@given(game_lists(), st.integers(min_value=0, max_value=2**32 - 1))
def test_vectorised_replicates_match_sequential_elo(games: list[GameResult], seed: int) -> None:
    counts = resample_counts(games, n_resamples=3, seed=seed)
    counts = np.vstack([np.ones((1, len(games)), dtype=np.int32), counts])
    bots, reps = elo_replicates(games, counts)
    for row, mult in zip(reps, counts, strict=True):
        replayed = [game for game, m in zip(games, mult, strict=True) for _ in range(int(m))]
        expected = elo_ratings(replayed).ratings
        for i, bot in enumerate(bots):
            if bot in expected:
                assert row[i] == pytest.approx(expected[bot], abs=1e-9)
            else:
                assert math.isnan(row[i])


def test_replicates_reject_wrong_shape() -> None:
    games = [GameResult(("a", "b"), (1, 2), (1.0, 0.0))]
    with pytest.raises(RatingInputError):
        elo_replicates(games, np.ones((2, 3), dtype=np.int32))


@pytest.mark.parametrize("bad", [{"k": 0.0}, {"k": -1.0}, {"scale": 0.0}, {"k": math.inf}])
def test_bad_parameters(bad: dict[str, float]) -> None:
    with pytest.raises(RatingInputError):
        elo_ratings([], **bad)


def test_elo_diff_from_share_point_and_interval() -> None:
    diff, lo, hi = elo_diff_from_share(0.75, 200)
    assert diff == pytest.approx(400 * math.log10(3))
    assert lo < diff < hi
    assert share_from_elo_diff(diff) == pytest.approx(0.75)
    # Wilson interval at p = 0.75, n = 200, z = 1.96, mapped through the logistic
    z = 1.959963984540054
    centre = (0.75 + z * z / 400) / (1 + z * z / 200)
    half = z / (1 + z * z / 200) * math.sqrt(0.75 * 0.25 / 200 + z * z / (4 * 200 * 200))
    assert lo == pytest.approx(400 * math.log10((centre - half) / (1 - centre + half)))
    assert hi == pytest.approx(400 * math.log10((centre + half) / (1 - centre - half)))


def test_elo_diff_interval_shrinks_with_n_and_is_symmetric_at_half() -> None:
    widths = [elo_diff_from_share(0.6, n)[2] - elo_diff_from_share(0.6, n)[1] for n in (10, 100, 1000)]
    assert widths[0] > widths[1] > widths[2]
    diff, lo, hi = elo_diff_from_share(0.5, 50)
    assert diff == 0.0 and lo == pytest.approx(-hi)
    assert elo_diff_from_share(0.5, 50, level=0.99)[2] > hi


def test_elo_diff_extreme_shares() -> None:
    diff, lo, hi = elo_diff_from_share(1.0, 20)
    assert diff == math.inf and hi == math.inf and math.isfinite(lo) and lo > 0
    diff, lo, hi = elo_diff_from_share(0.0, 20)
    assert diff == -math.inf and lo == -math.inf and math.isfinite(hi) and hi < 0


@pytest.mark.parametrize(("share", "n"), [(-0.1, 10), (1.5, 10), (math.nan, 10), (0.5, 0), (0.5, 2.5)])
def test_elo_diff_bad_input(share: float, n: int) -> None:
    with pytest.raises(RatingInputError):
        elo_diff_from_share(share, n)
