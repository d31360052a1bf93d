"""Bayesian online rating with the Plackett-Luce model of Weng & Lin (2011).

R. C. Weng and C.-J. Lin, "A Bayesian Approximation Method for Online Ranking", JMLR 12 (2011),
Algorithm 4 (the model the OpenSkill libraries call ``PlackettLuce``). Written from the paper; every
player is a team of one here.

Each bot's skill is a normal belief ``N(mu, sigma^2)``. For a game with seats ``1..n`` and placings
``r`` (smaller is better):

    c      = sqrt(sum_s (sigma_s^2 + beta^2))
    e_s    = exp(mu_s / c)
    S_q    = sum over s with r(s) >= r(q) of e_s     (q and everyone tied with or behind q)
    A_q    = number of seats with r(s) == r(q)      (ties share the "choice" of their place)
    p_iq   = e_i / S_q
    Omega_i = sigma_i^2 / c      * sum over q with r(q) <= r(i) of ([i == q] - p_iq) / A_q
    Delta_i = gamma_i * sigma_i^2 / c^2 * sum over q with r(q) <= r(i) of p_iq (1 - p_iq) / A_q
    gamma_i = sigma_i / c
    mu_i      <- mu_i + Omega_i
    sigma_i^2 <- sigma_i^2 * max(1 - Delta_i, kappa)

``kappa`` keeps the variance positive. ``tau`` (default 0) is the optional dynamics term that widens
each sigma before a game (``sigma^2 + tau^2``); bots are fixed programs whose skill does not drift,
so it is off by default (the OpenSkill libraries default to ``25/300``).

Defaults: ``mu = 25``, ``sigma = 25/3``, ``beta = 25/6``, ``kappa = 0.0001``. The conservative
display value is ``ordinal = mu - 3 * sigma``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.ratings.errors import RatingInputError
from arena.ratings.results import GameResult, check_results, games_played

__all__ = ["OpenSkillParams", "OpenSkillRatings", "Skill", "openskill_ratings", "plackett_luce_update"]


@dataclass(frozen=True, slots=True)
class OpenSkillParams:
    """Model constants (see the module docstring).

    Raises:
        RatingInputError: ``sigma``/``beta`` not positive, ``kappa`` not in (0, 1], ``tau`` negative,
            or any value not finite.
    """

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    kappa: float = 0.0001
    tau: float = 0.0

    def __post_init__(self) -> None:
        values = (self.mu, self.sigma, self.beta, self.kappa, self.tau)
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            raise RatingInputError(f"OpenSkill parameters must be finite numbers, got {self!r}")
        if self.sigma <= 0 or self.beta <= 0:
            raise RatingInputError(f"sigma and beta must be positive, got {self!r}")
        if not 0 < self.kappa <= 1:
            raise RatingInputError(f"kappa must be in (0, 1], got {self.kappa!r}")
        if self.tau < 0:
            raise RatingInputError(f"tau must be non-negative, got {self.tau!r}")


@dataclass(frozen=True, slots=True)
class Skill:
    """A bot's skill belief: mean ``mu`` and standard deviation ``sigma``."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """Conservative estimate ``mu - 3 * sigma`` (what OpenSkill leaderboards display)."""
        return self.mu - 3.0 * self.sigma


@dataclass(frozen=True, slots=True)
class OpenSkillRatings:
    """Result of :func:`openskill_ratings`: final skill and number of games per bot."""

    ratings: dict[str, Skill]
    games: dict[str, int]
    params: OpenSkillParams = field(default_factory=OpenSkillParams)


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
