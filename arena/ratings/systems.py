"""The registry of rating systems: the one place that says which systems exist and how each is shown.

A rating system is one frozen :class:`RatingSystem`: its name (``--system NAME``, ``?system=``,
the ``system`` column of stored ratings), how people see it (a short label, a one-line title, the
headers of its rating column and of the column it is ranked by, the decimals it is shown with) and
the function that turns game results into :class:`~arena.ratings.rating.Rating` rows. Everything
that names a system reads it from :data:`RATING_SYSTEMS`: :func:`arena.ratings.rate`, the
leaderboards (:mod:`arena.leaderboard`: terminal, Markdown, published JSON), the web pages and
API, and ``arena leaderboard --system`` (its choices, help and error).

To add a system, write its function and add one :class:`RatingSystem` to :data:`BUILTIN` below
(at run time, e.g. in a test: :func:`register`, undone by :func:`unregister`).

A system's rows are ranked by :attr:`Rating.conservative
<arena.ratings.rating.Rating.conservative>`, a value the bot is fairly sure to deserve: the row's
``ordinal`` when the function sets one (OpenSkill's ``mu - 3 sigma``), otherwise the interval's
lower bound, or the point estimate when the row has no interval (NaN bounds).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from arena.ratings.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    resample_counts,
)
from arena.ratings.elo import elo_ratings, elo_replicates
from arena.ratings.errors import DuplicateRatingSystemError, RatingError, UnknownRatingSystemError
from arena.ratings.openskill import openskill_ratings
from arena.ratings.plackett_luce import fit_plackett_luce
from arena.ratings.rating import Rating
from arena.ratings.results import GameResult

__all__ = [
    "BUILTIN",
    "DEFAULT_SYSTEM",
    "RATING_SYSTEMS",
    "RateSettings",
    "RatingSystem",
    "get_system",
    "register",
    "system_names",
    "unregister",
]

NAME_MAX = 16
"""Longest system name: the ``system`` column of stored ratings holds 16 characters."""
_NAME = re.compile(r"[a-z][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class RateSettings:
    """The settings :func:`arena.ratings.rate` passes to a system's function (checked already:
    ``level`` is in (0, 1)). A system uses what applies to it and ignores the rest."""

    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL


RateFunction = Callable[[Sequence[GameResult], RateSettings], list[Rating]]
"""Games (checked :class:`GameResult` values, in game order) -> one row per bot, any order, each
with ``system`` set to the system's name."""


@dataclass(frozen=True, slots=True)
class RatingSystem:
    """One rating system: what it is called, how it is shown, and how it is computed.

    Attributes:
        name: the id (``--system NAME``, ``?system=NAME``, stored ratings): lower-case letters,
            digits and ``-``, starting with a letter, at most 16 characters.
        label: its short name (the web page's tab), e.g. ``"Plackett-Luce"``.
        title: one line saying what the numbers are and what the ranking sorts by (under every
            leaderboard's heading, and in its JSON).
        rating_label: the header of the point estimate's column, e.g. ``"Elo"``.
        ranked_by_label: the header of the column the ranking sorts by
            (:attr:`Rating.conservative <arena.ratings.rating.Rating.conservative>`), e.g.
            ``"lower bound"``; the web page sets its `` - `` as a minus sign.
        decimals: decimals the numbers are shown with (an interval that rounds to one value is
            shown as "too few games" for a provisional bot, "not measurable" for a ranked one).
        rate: the function that turns results into rows (see :data:`RateFunction`).

    Raises:
        ValueError: a malformed name or a negative number of decimals.
    """

    name: str
    label: str
    title: str
    rating_label: str
    ranked_by_label: str
    decimals: int
    rate: RateFunction

    def __post_init__(self) -> None:
        if not (_NAME.fullmatch(self.name) and len(self.name) <= NAME_MAX):
            raise ValueError(
                f"rating system name {self.name!r} is not valid: use lower-case letters, digits and '-', "
                f"starting with a letter, at most {NAME_MAX} characters"
            )
        if not 0 <= self.decimals <= 6:
            raise ValueError(f"rating system {self.name!r}: decimals must be 0..6, got {self.decimals}")


def _elo(games: Sequence[GameResult], settings: RateSettings) -> list[Rating]:
    """The sequential Elo rating after all games; the percentile bootstrap of the same Elo replayed
    on resampled whole duplicate-dice groups."""
    point = elo_ratings(games)
    bots, reps = elo_replicates(games, resample_counts(games, settings.n_resamples, settings.seed))
    lo, hi = percentile_interval(reps, settings.level)
    return [
        Rating(bot, point.ratings[bot], float(lo[i]), float(hi[i]), point.games[bot], "elo")
        for i, bot in enumerate(bots)
    ]


def _openskill(games: Sequence[GameResult], settings: RateSettings) -> list[Rating]:
    """``mu`` on OpenSkill's own scale (prior 25), interval ``mu ± z sigma`` (z = 1.96 at 0.95),
    ranked by ``mu - 3 sigma``."""
    skills = openskill_ratings(games)
    z = NormalDist().inv_cdf(0.5 + settings.level / 2.0)
    return [
        Rating(bot, s.mu, s.mu - z * s.sigma, s.mu + z * s.sigma, skills.games[bot], "openskill", s.ordinal)
        for bot, s in skills.ratings.items()
    ]


def _plackett_luce(games: Sequence[GameResult], settings: RateSettings) -> list[Rating]:
    """The Plackett-Luce maximum-likelihood rating (mean bot 1500) with its percentile bootstrap."""
    if not games:
        return []
    fit = fit_plackett_luce(games, n_resamples=settings.n_resamples, seed=settings.seed, level=settings.level)
    return [Rating(bot, e.value, e.lo, e.hi, fit.games[bot], "pl") for bot, e in fit.ratings.items()]


BUILTIN: tuple[RatingSystem, ...] = (
    RatingSystem(
        name="pl",
        label="Plackett-Luce",
        title="Plackett-Luce fit (Elo-like scale, mean bot 1500), 95% bootstrap interval; "
        "ranked by the interval's lower bound",
        rating_label="rating",
        ranked_by_label="lower bound",
        decimals=0,
        rate=_plackett_luce,
    ),
    RatingSystem(
        name="elo",
        label="Elo",
        title="Elo (pairwise, K=16, start 1500), 95% bootstrap interval; "
        "ranked by the interval's lower bound",
        rating_label="Elo",
        ranked_by_label="lower bound",
        decimals=0,
        rate=_elo,
    ),
    RatingSystem(
        name="openskill",
        label="OpenSkill",
        title="OpenSkill Plackett-Luce (mu on OpenSkill's own scale, start 25), mu ± 1.96 sigma; "
        "ranked by mu - 3 sigma",
        rating_label="mu",
        ranked_by_label="mu - 3 sigma",
        decimals=1,
        rate=_openskill,
    ),
)
"""The systems shipped with Pool Arena, in the order they are offered (the first is the default)."""

DEFAULT_SYSTEM = BUILTIN[0].name
"""The system used when none is named."""

RATING_SYSTEMS: dict[str, RatingSystem] = {s.name: s for s in BUILTIN}
"""Every registered system by name, in the order they are offered. Read it; change it only through
:func:`register` and :func:`unregister`."""


def system_names() -> tuple[str, ...]:
    """The registered systems' names, in the order they are offered."""
    return tuple(RATING_SYSTEMS)


def get_system(name: str) -> RatingSystem:
    """The registered system called ``name``.

    Raises:
        UnknownRatingSystemError: no such system (the message lists the registered ones).
    """
    try:
        return RATING_SYSTEMS[name]
    except KeyError:
        raise UnknownRatingSystemError(
            f"unknown rating system {name!r}; choose from {', '.join(RATING_SYSTEMS)}"
        ) from None


def register(system: RatingSystem) -> RatingSystem:
    """Add ``system`` to the registry (offered after the ones already there) and return it.

    Raises:
        DuplicateRatingSystemError: a system of that name is registered already.
    """
    if system.name in RATING_SYSTEMS:
        raise DuplicateRatingSystemError(f"a rating system {system.name!r} is registered already")
    RATING_SYSTEMS[system.name] = system
    return system


def unregister(name: str) -> RatingSystem:
    """Remove the system called ``name`` from the registry and return it (undoes :func:`register`).

    Raises:
        UnknownRatingSystemError: no such system.
        RatingError: ``name`` is the default system, which every command falls back on.
    """
    system = get_system(name)
    if name == DEFAULT_SYSTEM:
        raise RatingError(f"the default rating system {name!r} cannot be unregistered")
    del RATING_SYSTEMS[name]
    return system
