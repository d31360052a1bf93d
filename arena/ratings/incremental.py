"""Incremental OpenSkill: one match at a time, as results come in (the ladder's ratings).

OpenSkill (:mod:`arena.ratings.openskill`, Weng-Lin Plackett-Luce) is already an online method:
the belief after a match depends only on the beliefs before it and the placings.  This module
is that fold, one step per match, with the games counted; applying :func:`update` to every
match in the order they were recorded gives exactly :func:`~arena.ratings.openskill_ratings` of
the same list (tested), so a ladder may store the beliefs and update them in each result's
transaction instead of recomputing from 100,000 matches.

The leaderboard ranks by the conservative value OpenSkill documents, ``ordinal = mu - 3
sigma`` (:attr:`Belief.conservative`); a bot with fewer than ``min_games`` games is provisional.

Like the rest of :mod:`arena.ratings`, pure: nothing here reads a database or a clock (the
ladder's store side is :mod:`arena.ladder.ratings`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from arena.ratings.errors import RatingInputError
from arena.ratings.openskill import OpenSkillParams, Skill, plackett_luce_update

K = TypeVar("K", bound=Hashable)

PARAMS = OpenSkillParams()
"""The ladder's OpenSkill constants (the library defaults: mu 25, sigma 25/3, beta 25/6)."""


@dataclass(frozen=True, slots=True)
class Belief:
    """A bot's OpenSkill belief and the number of games it rests on."""

    mu: float
    sigma: float
    games: int = 0

    @property
    def conservative(self) -> float:
        """``mu - 3 sigma``: the value OpenSkill leaderboards rank by."""
        return self.mu - 3.0 * self.sigma


def prior(params: OpenSkillParams = PARAMS) -> Belief:
    """A new bot's belief."""
    return Belief(float(params.mu), float(params.sigma), 0)


def update(
    before: Sequence[Belief], placings: Sequence[int], params: OpenSkillParams = PARAMS
) -> list[Belief]:
    """The beliefs of a match's seats after it (seat order in and out; placings 1 = best).

    Raises:
        RatingInputError: fewer than two seats, or not one placing per seat.
    """
    if len(before) != len(placings):
        raise RatingInputError(
            f"need one placing per seat, got {len(before)} seats, {len(placings)} placings"
        )
    after = plackett_luce_update([Skill(b.mu, b.sigma) for b in before], list(placings), params)
    return [Belief(s.mu, s.sigma, b.games + 1) for b, s in zip(before, after, strict=True)]


def apply(
    current: Mapping[K, Belief],
    players: Sequence[K],
    placings: Sequence[int],
    params: OpenSkillParams = PARAMS,
) -> dict[K, Belief]:
    """The new beliefs of ``players`` (by seat) after one match, given ``current`` (a player
    missing from it starts at :func:`prior`).  Raises :class:`RatingInputError` for a player
    seated twice."""
    if len(set(players)) != len(players):
        raise RatingInputError(f"a player is seated twice: {list(players)!r}")
    start = prior(params)
    after = update([current.get(p, start) for p in players], placings, params)
    return dict(zip(players, after, strict=True))


def fold(
    matches: Iterable[tuple[Sequence[K], Sequence[int]]], params: OpenSkillParams = PARAMS
) -> dict[K, Belief]:
    """Every belief after ``matches`` (players by seat, placings), applied in order."""
    out: dict[K, Belief] = {}
    for players, placings in matches:
        out.update(apply(out, players, placings, params))
    return out


def ranked(beliefs: Mapping[K, Belief], min_games: int) -> tuple[list[K], list[K]]:
    """(ranked, provisional): players with at least ``min_games`` games by conservative value,
    best first; the others, also best first.  Ties by ``mu``, then by key text."""
    order = sorted(beliefs, key=lambda k: (-beliefs[k].conservative, -beliefs[k].mu, str(k)))
    return [k for k in order if beliefs[k].games >= min_games], [
        k for k in order if beliefs[k].games < min_games
    ]
