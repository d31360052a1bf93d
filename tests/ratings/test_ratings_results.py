"""GameResult validation and helpers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.ratings import GameResult, RatingInputError, placings_from_scores
from arena.ratings.results import bots_of, check_results, games_played


def competition_ranking(placings: list[int]) -> tuple[int, ...]:
    return tuple(1 + sum(1 for q in placings if q < p) for p in placings)


def test_valid_result_is_normalised() -> None:
    game = GameResult(["a", "b", "c"], [2, 1, 2], [3, 7, 3], game_id="g1", group="s1")  # type: ignore[arg-type]
    assert game.players == ("a", "b", "c")
    assert game.placings == (2, 1, 2)
    assert game.scores == (3.0, 7.0, 3.0)
    assert all(isinstance(s, float) for s in game.scores)
    assert game.n_players == 3


@pytest.mark.parametrize(
    ("players", "placings", "scores", "fragment"),
    [
        (("a",), (1,), (0.0,), "at least 2 players"),
        (("a", "b"), (1,), (0.0, 0.0), "one entry per seat"),
        (("a", "b"), (1, 2), (0.0,), "one entry per seat"),
        (("a", "a"), (1, 2), (0.0, 0.0), "only one seat"),
        (("a", ""), (1, 2), (0.0, 0.0), "non-empty strings"),
        (("a", 3), (1, 2), (0.0, 0.0), "non-empty strings"),
        (("a", "b"), (1, 3), (0.0, 0.0), "competition ranking"),
        (("a", "b"), (0, 1), (0.0, 0.0), "competition ranking"),
        (("a", "b", "c"), (1, 2, 2.0), (0.0, 0.0, 0.0), "must be ints"),
        (("a", "b"), (True, 2), (0.0, 0.0), "must be ints"),
        (("a", "b", "c"), (1, 1, 2), (0.0, 0.0, 0.0), "competition ranking"),
        (("a", "b"), (1, 2), (0.0, float("nan")), "finite"),
        (("a", "b"), (1, 2), (0.0, "x"), "finite"),
        ("ab", (1, 2), (0.0, 0.0), "must be a tuple"),
    ],
)
def test_invalid_results_raise(players: object, placings: object, scores: object, fragment: str) -> None:
    with pytest.raises(RatingInputError, match=fragment):
        GameResult(players, placings, scores, game_id="bad")  # type: ignore[arg-type]


def test_error_quotes_game_id() -> None:
    with pytest.raises(RatingInputError, match="game 'g42'"):
        GameResult(("a", "b"), (2, 2), (0.0, 0.0), game_id="g42")


def test_input_error_is_a_value_error() -> None:
    assert issubclass(RatingInputError, ValueError)


def test_from_scores_ties_share_and_skip() -> None:
    game = GameResult.from_scores(["a", "b", "c", "d"], [10, 30, 10, 5])
    assert game.placings == (2, 1, 2, 4)
    assert placings_from_scores([1.0, 1.0]) == (1, 1)


def test_check_results_rejects_foreign_items() -> None:
    good = GameResult(("a", "b"), (1, 2), (1.0, 0.0))
    assert check_results([good]) == (good,)
    with pytest.raises(RatingInputError, match=r"results\[1\]"):
        check_results([good, ("a", "b")])  # type: ignore[list-item]


def test_bots_and_games_played() -> None:
    games = [
        GameResult(("b", "a"), (1, 2), (1.0, 0.0)),
        GameResult(("c", "a", "d"), (1, 2, 3), (3.0, 2.0, 1.0)),
    ]
    assert bots_of(games) == ["a", "b", "c", "d"]
    assert games_played(games) == {"b": 1, "a": 2, "c": 1, "d": 1}


@given(st.lists(st.integers(min_value=-1, max_value=6), min_size=2, max_size=5))
def test_placings_accepted_iff_competition_ranking(placings: list[int]) -> None:
    players = tuple(f"p{i}" for i in range(len(placings)))
    scores = tuple(0.0 for _ in placings)
    if tuple(placings) == competition_ranking(placings):
        assert GameResult(players, tuple(placings), scores).placings == tuple(placings)
    else:
        with pytest.raises(RatingInputError):
            GameResult(players, tuple(placings), scores)


@given(st.lists(st.integers(min_value=0, max_value=4), min_size=2, max_size=6))
def test_placings_from_scores_always_valid(scores: list[int]) -> None:
    players = [f"p{i}" for i in range(len(scores))]
    game = GameResult.from_scores(players, [float(s) for s in scores])
    for i in range(len(scores)):
        for j in range(len(scores)):
            assert (scores[i] > scores[j]) == (game.placings[i] < game.placings[j])
