"""Weng-Lin Plackett-Luce (OpenSkill-style) online rating."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.ratings import (
    GameResult,
    OpenSkillParams,
    RatingInputError,
    Skill,
    openskill_ratings,
    plackett_luce_update,
)

PRIOR = Skill(25.0, 25.0 / 3.0)


def test_defaults() -> None:
    p = OpenSkillParams()
    assert (p.mu, p.sigma, p.beta, p.kappa, p.tau) == (25.0, 25.0 / 3.0, 25.0 / 6.0, 0.0001, 0.0)
    assert PRIOR.ordinal == pytest.approx(0.0)


def test_two_player_win_matches_reference_values() -> None:
    # Worked by hand from Weng & Lin's Algorithm 4: c = sqrt(2 (sigma^2 + beta^2)) = 13.176;
    # these are also the values the OpenSkill libraries publish for a default 1v1 win.
    winner, loser = plackett_luce_update([PRIOR, PRIOR], [1, 2])
    assert winner.mu == pytest.approx(27.635231383473217)
    assert loser.mu == pytest.approx(22.364768616526783)
    assert winner.sigma == pytest.approx(8.065506316323548)
    assert loser.sigma == pytest.approx(8.065506316323548)


def test_winner_up_loser_down_sigma_shrinks() -> None:
    result = openskill_ratings([GameResult(("w", "x", "y", "l"), (1, 2, 3, 4), (4.0, 3.0, 2.0, 1.0))])
    r = result.ratings
    assert r["w"].mu > r["x"].mu > 25.0 > r["y"].mu > r["l"].mu
    assert all(s.sigma < PRIOR.sigma for s in r.values())
    assert result.games == {"w": 1, "x": 1, "y": 1, "l": 1}


def test_tie_between_equals_keeps_mu_and_shrinks_sigma() -> None:
    a, b = plackett_luce_update([PRIOR, PRIOR], [1, 1])
    assert a.mu == pytest.approx(25.0) and b.mu == pytest.approx(25.0)
    assert a.sigma < PRIOR.sigma and a.sigma == pytest.approx(b.sigma)


def test_tie_with_weaker_player_costs_the_stronger() -> None:
    strong, weak = plackett_luce_update([Skill(30.0, 5.0), Skill(20.0, 5.0)], [1, 1])
    assert strong.mu < 30.0 and weak.mu > 20.0


def test_tied_seats_in_multiplayer_are_treated_alike() -> None:
    after = plackett_luce_update([PRIOR, PRIOR, PRIOR, PRIOR], [1, 2, 2, 4])
    assert after[1].mu == pytest.approx(after[2].mu)
    assert after[1].sigma == pytest.approx(after[2].sigma)
    assert after[0].mu > after[1].mu > after[3].mu


def test_upset_moves_more_than_expected_win() -> None:
    strong, weak = Skill(30.0, 4.0), Skill(20.0, 4.0)
    expected = plackett_luce_update([strong, weak], [1, 2])
    upset = plackett_luce_update([strong, weak], [2, 1])
    assert upset[1].mu - weak.mu > expected[0].mu - strong.mu > 0


def test_kappa_floors_the_variance() -> None:
    params = OpenSkillParams(kappa=0.5)
    tiny_beta = OpenSkillParams(beta=1e-3, kappa=0.5)
    for p in (params, tiny_beta):
        after = plackett_luce_update([PRIOR, PRIOR], [1, 2], p)
        assert after[0].sigma >= PRIOR.sigma * 0.5**0.5 - 1e-12


def test_tau_widens_sigma_before_the_update() -> None:
    plain = plackett_luce_update([PRIOR, PRIOR], [1, 1])
    drifting = plackett_luce_update([PRIOR, PRIOR], [1, 1], OpenSkillParams(tau=1.0))
    assert drifting[0].sigma > plain[0].sigma


def test_huge_mu_does_not_overflow() -> None:
    after = plackett_luce_update([Skill(1e5, 1.0), Skill(0.0, 1.0)], [2, 1], OpenSkillParams(beta=1.0))
    assert after[0].mu < 1e5 and after[1].mu > 0.0


@given(st.permutations(range(4)), st.lists(st.integers(0, 2), min_size=4, max_size=4))
def test_update_is_equivariant_to_seat_order(perm: list[int], scores: list[int]) -> None:
    skills = [Skill(20.0 + 3 * i, 3.0 + i) for i in range(4)]
    game = GameResult.from_scores(["a", "b", "c", "d"], [float(s) for s in scores])
    base = plackett_luce_update(skills, game.placings)
    permuted = plackett_luce_update([skills[i] for i in perm], [game.placings[i] for i in perm])
    for k, i in enumerate(perm):
        assert permuted[k].mu == pytest.approx(base[i].mu)
        assert permuted[k].sigma == pytest.approx(base[i].sigma)


def test_repeated_wins_keep_separating() -> None:
    games = [GameResult(("a", "b"), (1, 2), (1.0, 0.0)) for _ in range(30)]
    r = openskill_ratings(games).ratings
    assert r["a"].ordinal > r["b"].ordinal
    sigmas = [openskill_ratings(games[:k]).ratings["a"].sigma for k in (1, 10, 30)]
    assert PRIOR.sigma > sigmas[0] > sigmas[1] > sigmas[2]


@pytest.mark.parametrize(
    "kwargs",
    [{"sigma": 0.0}, {"beta": -1.0}, {"kappa": 0.0}, {"kappa": 2.0}, {"tau": -0.1}, {"mu": float("inf")}],
)
def test_bad_params(kwargs: dict[str, float]) -> None:
    with pytest.raises(RatingInputError):
        OpenSkillParams(**kwargs)


def test_bad_update_input() -> None:
    with pytest.raises(RatingInputError):
        plackett_luce_update([PRIOR], [1])
    with pytest.raises(RatingInputError):
        plackett_luce_update([PRIOR, PRIOR], [1])
