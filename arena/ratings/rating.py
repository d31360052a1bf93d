"""The one leaderboard row type every rating system produces (see :mod:`arena.ratings.systems`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Rating", "shown_interval"]


@dataclass(frozen=True, slots=True)
class Rating:
    """One leaderboard row.

    Attributes:
        bot: bot id.
        rating: point estimate on the system's scale.
        lo, hi: interval bounds (NaN when no interval could be computed, e.g. ``n_resamples=0``).
        games: games the bot played.
        system: the system that produced the row.
        ordinal: the value to rank by when it is not the interval's lower bound (OpenSkill's
            ``mu - 3 sigma``); None for the systems ranked by the lower bound.
    """

    bot: str
    rating: float
    lo: float
    hi: float
    games: int
    system: str
    ordinal: float | None = None

    @property
    def conservative(self) -> float:
        """What the ranking sorts by: :attr:`ordinal` when set (OpenSkill's ``mu - 3 sigma``);
        otherwise the interval's lower bound, or the point estimate when there is no interval
        (NaN)."""
        if self.ordinal is not None:
            return self.ordinal
        return self.lo if math.isfinite(self.lo) else self.rating


def shown_interval(lo: float | None, hi: float | None, decimals: int) -> tuple[float | None, float | None]:
    """The interval ``(lo, hi)`` as a page shows it with ``decimals`` decimals, or ``(None, None)``
    when it says nothing: a bound missing or not finite, or a width under the last shown digit
    (every resample gave about the same value: a one-sided record, such as every game won
    against the same opponents, where the prior alone holds the estimate; ``2286 .. 2287`` for
    such a bot claimed a precision no data can give)."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None, None
    if hi - lo < 10.0**-decimals or round(lo, decimals) == round(hi, decimals):
        return None, None
    return lo, hi
