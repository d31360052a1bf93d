"""The format interface: what can be played next, given the results so far?

A tournament format is a *pure function* of the tournament's settings (:class:`Settings`: the
field size, table sizes, games, seed and options) and the matches recorded so far
(:class:`Recorded`): :meth:`Format.next` answers

- :class:`Wait`: nothing new yet (matches it handed out are still being played);
- :class:`Play`: these pairings (seats, seed, duplicate-dice group, round) and these byes;
- :class:`Finished`: the tournament is over.

Everything a format hands out is stored (matches and byes, in one transaction) before it is
played, so the stored rows *are* the format's state: a coordinator killed at any moment and
resumed asks again with the same results and gets the same answer, and an answer already stored
is never handed out twice (the format sees its own earlier pairings among the results).

Entries are indices into the tournament's field in registration order (for a gauntlet, entry 0
is the candidate).  Adding a format: one module in this package with a :class:`Format` subclass
and one line in :data:`arena.tournament.formats.REGISTRY`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar


class FormatError(ValueError):
    """Settings a format cannot play (says what was wrong and what to do)."""


@dataclass(frozen=True)
class Settings:
    """What a format is a function of (besides the recorded results).

    ``entries``: the field size (entries are ``0..entries-1``); ``table_sizes``: players per
    table; ``games``: seeds per table (each under every seat rotation); ``seed``: the
    tournament seed; ``rounds``: for formats played in rounds (None: the format's default);
    ``options``: format-specific JSON-able values (e.g. a knockout's seeding order).
    """

    entries: int
    table_sizes: tuple[int, ...] = (2,)
    games: int = 1
    seed: int = 1
    rounds: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Pairing:
    """One match to play: entries by seat, its seed, its duplicate-dice group and its round.

    Every match of one ``group`` has the same seed and the same table under a different seat
    rotation; group keys are unique within a tournament.
    """

    seed: int
    group: str
    seating: tuple[int, ...]
    round: int = 0


@dataclass(frozen=True)
class Bye:
    """An entry that sits out ``round`` (recorded as such; ``points`` is what it scores)."""

    round: int
    entry: int
    points: float


@dataclass(frozen=True)
class Recorded:
    """One stored match as a format sees it.

    ``status`` is ``queued``, ``running``, ``finished`` or ``failed``; ``placings`` (1 = best,
    shared places share a number) and ``scores`` are by seat and set only when finished.
    """

    ordinal: int
    round: int
    group: str
    seed: int
    seating: tuple[int, ...]
    status: str
    placings: tuple[int, ...] | None = None
    scores: tuple[int, ...] | None = None

    @property
    def done(self) -> bool:
        """Finished or failed: nothing more will come of it."""
        return self.status in ("finished", "failed")


@dataclass(frozen=True)
class History:
    """Everything recorded so far: the stored matches in schedule order, and the byes."""

    matches: Sequence[Recorded] = ()
    byes: Sequence[Bye] = ()


@dataclass(frozen=True)
class Wait:
    """Nothing to hand out until more results come in."""


@dataclass(frozen=True)
class Play:
    """These matches (stored in this order, appended to the schedule) and these byes."""

    pairings: tuple[Pairing, ...]
    byes: tuple[Bye, ...] = ()


@dataclass(frozen=True)
class Finished:
    """The format has nothing more to play."""


Next = Wait | Play | Finished


class Format(ABC):
    """A tournament format.  Subclasses set :attr:`name`, may override :meth:`check` (reject
    bad settings with :class:`FormatError`) and implement :meth:`next`.

    ``next`` must be deterministic in (settings, history) and must not hand out again what the
    history already holds.
    """

    name: ClassVar[str]

    def __init__(self, settings: Settings) -> None:
        self.check(settings)
        self.settings = settings

    @classmethod
    def check(cls, settings: Settings) -> None:
        """Raise :class:`FormatError` when ``settings`` cannot be played by this format."""
        if settings.games < 1:
            raise FormatError("games must be at least 1")

    @abstractmethod
    def next(self, history: History) -> Next:
        """What can be played next, given ``history``."""

    def planned(self) -> int | None:
        """How many matches the whole tournament will have, when known in advance (else None)."""
        return None

    def ranking(self, history: History) -> list[int] | None:
        """Entries best first by the format's own standing (a Swiss's points and Buchholz, a
        finished knockout's places), which the cross table follows; None when the format has no
        standing of its own (the cross table is then ordered by head-to-head share)."""
        return None

    def report(self, history: History, names: Sequence[str]) -> list[str]:
        """Lines that say how the format stands (``names[e]`` is entry ``e``): e.g. Swiss points
        or a knockout's bracket.  None by default."""
        return []
