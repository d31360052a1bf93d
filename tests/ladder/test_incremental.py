"""Incremental OpenSkill (arena/ratings/incremental.py): one match at a time gives exactly the
batch OpenSkill of the same list; ranking by mu - 3 sigma with a provisional list."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import GameResult, openskill_ratings
from arena.ratings.errors import RatingInputError
from arena.ratings.incremental import Belief, apply, fold, prior, ranked


@st.composite
def games(draw: st.DrawFn) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    out = []
    for _ in range(draw(st.integers(1, 30))):
        k = draw(st.integers(2, 4))
        players = tuple(draw(st.permutations(["a", "b", "c", "d", "e"]))[:k])
        values = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))  # a score per seat
        placings = tuple(1 + sum(1 for w in values if w > v) for v in values)
        out.append((players, placings))
    return out


@settings(max_examples=60, deadline=None)
@given(games())
def test_fold_equals_batch_openskill(matches: list[tuple[tuple[str, ...], tuple[int, ...]]]) -> None:
    batch = openskill_ratings([GameResult(p, r, tuple(0.0 for _ in p)) for p, r in matches])
    step = fold(matches)
    assert set(step) == set(batch.ratings)
    for bot, b in step.items():
        assert b.mu == pytest.approx(batch.ratings[bot].mu, abs=1e-12)
        assert b.sigma == pytest.approx(batch.ratings[bot].sigma, abs=1e-12)
        assert b.games == batch.games[bot]


def test_apply_counts_games_and_refuses_a_player_seated_twice() -> None:
    after = apply({}, ["a", "b"], [1, 2])
    assert after["a"].games == after["b"].games == 1 and after["a"].mu > prior().mu > after["b"].mu
    with pytest.raises(RatingInputError, match="seated twice"):
        apply({}, ["a", "a"], [1, 2])


def test_ranked_by_conservative_value_with_provisional_apart() -> None:
    beliefs = {"sure": Belief(30.0, 1.0, 50), "lucky": Belief(40.0, 8.0, 3), "weak": Belief(20.0, 1.0, 40)}
    assert beliefs["sure"].conservative == 27.0
    top, provisional = ranked(beliefs, min_games=10)
    assert top == ["sure", "weak"] and provisional == ["lucky"]
