"""Exception types of the ratings package.

Every error raised on purpose by :mod:`arena.ratings` derives from :class:`RatingError`; the input
errors are also :class:`ValueError` so callers that only know the standard hierarchy still catch them.
"""

from __future__ import annotations

__all__ = [
    "DuplicateRatingSystemError",
    "RatingConvergenceError",
    "RatingError",
    "RatingInputError",
    "UnknownRatingSystemError",
]


class RatingError(Exception):
    """Base class of the errors this package raises deliberately."""


class RatingInputError(RatingError, ValueError):
    """A game result, a result list or a numeric argument is malformed.

    The message quotes the offending value and, for a game, its ``game_id`` when it has one.
    """


class UnknownRatingSystemError(RatingError, ValueError):
    """A rating system was asked for by a name the registry (:mod:`arena.ratings.systems`) does not
    hold; the message lists the registered ones."""


class DuplicateRatingSystemError(RatingError, ValueError):
    """A rating system was registered under a name that is taken already."""


class RatingConvergenceError(RatingError, RuntimeError):
    """A numerical fit did not converge within its iteration limit (a bug or absurd input scale)."""
