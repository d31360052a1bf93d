"""The input of every rating system: one finished game, as seen by the ratings.

A :class:`GameResult` is a value object validated on construction; the rating functions take a
sequence of them in game order and never look at anything else (no database, no engine).

Seats are positions in the tuples: ``players[i]``, ``placings[i]`` and ``scores[i]`` all describe
seat ``i`` (seat 0 moves first). Placings use standard competition ranking ("1224"): 1 is best,
tied players share a placing, and the placing after a tie skips accordingly, so for every seat
``placings[i] == 1 + (number of seats with a strictly smaller placing)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.ratings.errors import RatingInputError

__all__ = ["GameResult", "bots_of", "check_results", "games_played", "placings_from_scores"]


_RANKINGS: set[tuple[int, ...]] = set()
"""Placings already found to be standard competition ranking (a few dozen in practice: checked
once each, not once per game); at most :data:`_RANKINGS_MAX` are kept."""
_RANKINGS_MAX = 4096


def _where(game_id: str) -> str:
    return f" (game {game_id!r})" if game_id else ""


def placings_from_scores(scores: Sequence[float]) -> tuple[int, ...]:
    """Standard competition placings from scores, higher score better.

    >>> placings_from_scores([10, 30, 10, 5])
    (2, 1, 2, 4)
    """
    return tuple(1 + sum(1 for other in scores if other > mine) for mine in scores)


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game.

    Attributes:
        players: bot id per seat; at least two seats, ids non-empty and distinct within a game
            (self-play games carry no rating information and must be filtered or given distinct ids).
        placings: placing per seat, 1 = best, standard competition ranking (ties share a placing).
        scores: final score per seat (finite numbers); informational, the ratings use ``placings``.
        game_id: optional identifier, quoted in error messages.
        group: optional duplicate-dice group: games played from the same seed under all seatings
            share a group, and the bootstrap resamples whole groups. Empty = a group of its own.

    Lists are accepted and stored as tuples; ints in ``scores`` are stored as floats.

    Raises:
        RatingInputError: on any violation of the above, quoting the value.
    """

    players: tuple[str, ...]
    placings: tuple[int, ...]
    scores: tuple[float, ...]
    game_id: str = ""
    group: str = ""

    def __post_init__(self) -> None:
        # hot: every stored match becomes one of these for every leaderboard refit (10,000 in
        # tens of ms), so the common case (tuples of the right types) takes no detours
        game_id = self.game_id
        if not isinstance(game_id, str):
            raise RatingInputError(f"game_id must be a str, got {game_id!r}")
        where = _where(game_id)
        if not isinstance(self.group, str):
            raise RatingInputError(f"group must be a str, got {self.group!r}{where}")
        players, placings, scores = self.players, self.placings, self.scores
        if type(players) is not tuple:
            players = self._as_tuple("players", where)
        if type(placings) is not tuple:
            placings = self._as_tuple("placings", where)
        if type(scores) is not tuple:
            scores = self._as_tuple("scores", where)
        n = len(players)
        if n < 2:
            raise RatingInputError(f"a game needs at least 2 players, got players={players!r}{where}")
        if len(placings) != n or len(scores) != n:
            raise RatingInputError(
                f"players, placings and scores must have one entry per seat, got {n}, "
                f"{len(placings)} and {len(scores)}{where}"
            )
        for bot in players:
            if not isinstance(bot, str) or not bot:
                raise RatingInputError(f"bot ids must be non-empty strings, got {bot!r}{where}")
        if len(set(players)) != n:
            raise RatingInputError(f"a bot may occupy only one seat per game, got {players!r}{where}")
        for placing in placings:
            if isinstance(placing, bool) or not isinstance(placing, int):
                raise RatingInputError(f"placings must be ints, got {placings!r}{where}")
        if placings not in _RANKINGS:
            if placings != tuple(1 + sum(1 for q in placings if q < p) for p in placings):
                raise RatingInputError(
                    f"placings must be standard competition ranking (1 = best, ties share, e.g. 1,2,2,4), "
                    f"got {placings!r}{where}"
                )
            if len(_RANKINGS) < _RANKINGS_MAX:
                _RANKINGS.add(placings)
        convert = False
        for score in scores:
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise RatingInputError(f"scores must be finite numbers, got {scores!r}{where}")
            convert = convert or type(score) is not float
        if convert:
            object.__setattr__(self, "scores", tuple(float(score) for score in scores))

    def _as_tuple(self, name: str, where: str) -> tuple[Any, ...]:
        """The field ``name`` as a plain tuple (a list or tuple subclass is converted in place)."""
        value = getattr(self, name)
        if not isinstance(value, tuple | list):
            raise RatingInputError(f"{name} must be a tuple, got {value!r}{where}")
        converted = tuple(value)
        object.__setattr__(self, name, converted)
        return converted

    @classmethod
    def from_scores(
        cls, players: Sequence[str], scores: Sequence[float], game_id: str = "", group: str = ""
    ) -> GameResult:
        """A result whose placings follow the scores (higher is better, equal scores tie)."""
        return cls(tuple(players), placings_from_scores(scores), tuple(scores), game_id, group)

    @property
    def n_players(self) -> int:
        """Number of seats in the game."""
        return len(self.players)


def check_results(results: Iterable[GameResult]) -> tuple[GameResult, ...]:
    """Materialise ``results`` as a tuple, checking that every item is a :class:`GameResult`.

    Raises:
        RatingInputError: an item is not a :class:`GameResult` (its index and value are quoted).
    """
    checked = tuple(results)
    for index, item in enumerate(checked):
        if not isinstance(item, GameResult):
            raise RatingInputError(f"results[{index}] is not a GameResult: {item!r}")
    return checked


def bots_of(results: Iterable[GameResult]) -> list[str]:
    """Sorted list of the distinct bot ids that appear in ``results``."""
    return sorted({bot for result in results for bot in result.players})


def games_played(results: Iterable[GameResult]) -> dict[str, int]:
    """Number of games each bot took part in."""
    counts: dict[str, int] = {}
    for result in results:
        for bot in result.players:
            counts[bot] = counts.get(bot, 0) + 1
    return counts
