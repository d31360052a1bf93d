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
from functools import lru_cache

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
    after = _update([s.mu for s in skills], [s.sigma for s in skills], tuple(placings), p)
    return [Skill(mu=mu, sigma=sigma) for mu, sigma in after]


_Shape = tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[tuple[int, ...], ...]]


@lru_cache(maxsize=4096)
def _shape(placings: tuple[int, ...]) -> _Shape:
    """What the update needs from the placings alone: per seat ``q`` the seats at or behind it
    (ascending), per seat ``q`` the number tied with it, and per seat ``i`` the seats ``q`` placed
    at or above it (ascending)."""
    n = len(placings)
    behind = tuple(tuple(s for s in range(n) if placings[s] >= placings[q]) for q in range(n))
    tied = tuple(sum(1 for s in range(n) if placings[s] == placings[q]) for q in range(n))
    above = tuple(tuple(q for q in range(n) if placings[q] <= placings[i]) for i in range(n))
    return behind, tied, above


def _update(
    mus: Sequence[float], sigmas: Sequence[float], placings: tuple[int, ...], p: OpenSkillParams
) -> list[tuple[float, float]]:
    """(mu, sigma) per seat after one game: the formulas of the module docstring, in this order of
    operations (what :func:`plackett_luce_update` and :func:`openskill_ratings` both compute)."""
    n = len(mus)
    behind, tied, above = _shape(placings)
    tau2, beta2 = p.tau * p.tau, p.beta * p.beta
    var = [s * s + tau2 for s in sigmas]
    c = math.sqrt(sum(v + beta2 for v in var))
    top = max(mus) / c  # shift the exponents: ratios are unchanged, overflow is not
    exp = math.exp
    e = [exp(mu / c - top) for mu in mus]
    tail = [sum(e[s] for s in seats) for seats in behind]
    c2 = c * c
    out = []
    for i in range(n):
        omega = 0.0
        delta = 0.0
        e_i = e[i]
        for q in above[i]:
            prob = e_i / tail[q]
            omega += ((1.0 if q == i else 0.0) - prob) / tied[q]
            delta += prob * (1.0 - prob) / tied[q]
        v = var[i]
        gamma = math.sqrt(v) / c
        mu = mus[i] + v / c * omega
        new_var = v * max(1.0 - gamma * v / c2 * delta, p.kappa)
        out.append((mu, math.sqrt(new_var)))
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
    prior = (float(p.mu), float(p.sigma))
    state: dict[str, tuple[float, float]] = {}  # (mu, sigma): no Skill object per game and seat
    get = state.get
    for game in games:
        before = [get(bot, prior) for bot in game.players]
        after = _update([b[0] for b in before], [b[1] for b in before], game.placings, p)
        state.update(zip(game.players, after, strict=True))
    ratings = {bot: Skill(mu=mu, sigma=sigma) for bot, (mu, sigma) in state.items()}
    return OpenSkillRatings(ratings=ratings, games=games_played(games), params=p)
