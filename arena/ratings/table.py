"""The :func:`rate` dispatcher: any registered rating system, one row type, one order.

The systems, what their ``rating``, ``lo`` and ``hi`` mean and how they are shown are in the
registry, :mod:`arena.ratings.systems` (built in: ``"pl"``, ``"elo"``, ``"openskill"``).

Rows come sorted best first by :attr:`Rating.conservative` -- a value the bot is fairly sure to
deserve, so that a bot known from a few lucky games does not outrank one known from many: the
interval's lower bound for "elo" and "pl" (the point estimate when there is no interval), and
``mu - 3 sigma`` for "openskill" -- then by ``rating``, ties broken by bot id.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.ratings.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, check_level
from arena.ratings.errors import RatingError
from arena.ratings.rating import Rating
from arena.ratings.results import GameResult, check_results
from arena.ratings.systems import RateSettings, get_system

__all__ = ["Rating", "rate"]


def rate(
    results: Sequence[GameResult],
    system: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> list[Rating]:
    """Rate every bot in ``results`` with the registered ``system`` (built in: "pl", "elo",
    "openskill"), best first by :attr:`Rating.conservative`.

    ``n_resamples``, ``seed`` and ``level`` set the bootstrap for "elo" and "pl"; for "openskill"
    only ``level`` is used (``mu ± z * sigma``, z = 1.96 at 0.95). Defaults of each system apply.

    Raises:
        UnknownRatingSystemError: ``system`` is not registered (the message lists those that are).
        RatingInputError: malformed results or settings (see the system's function).
        RatingError: the system's function returned a row of another system.
    """
    spec = get_system(system)
    games = check_results(results)
    check_level(level)
    rows = spec.rate(games, RateSettings(n_resamples=n_resamples, seed=seed, level=level))
    for row in rows:
        if row.system != spec.name:
            raise RatingError(f"rating system {spec.name!r} returned a row of system {row.system!r}: {row}")
    return sorted(rows, key=lambda row: (-row.conservative, -row.rating, row.bot))
