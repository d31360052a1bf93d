"""What a match returns to whoever scheduled it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .faults import Forfeit


@dataclass(frozen=True)
class SeatOutcome:
    """One seat's result: score, placing, how its match ended, and its think time."""

    seat: int
    name: str
    score: int
    placing: int
    termination: str  # an arena.endings.Ending: a forfeit Reason, or the match's MatchEnd
    detail: str
    think_total: float  # seconds, on the referee's clock
    think_max: float
    decisions: int
    cpu_time: float | None = None  # seconds of CPU of the bot's process tree during the match


@dataclass(frozen=True)
class MatchResult:
    """The whole result: per-seat outcomes, the game's termination and the replay text."""

    match_id: str
    seed: int
    players: int
    termination: str  # an arena.endings.MatchEnd value: normal, round-cap or forfeit
    seats: tuple[SeatOutcome, ...]
    replay: str
    forfeits: tuple[Forfeit, ...] = ()
    duration: float = 0.0
    events: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    # the replay zlib-compressed and the sha256 of its text, when the worker that played the match
    # already packed it for storage (arena.store.tournaments.pack_replay): the coordinator stores it
    # as it is instead of compressing it itself
    packed: tuple[bytes, str] | None = None

    @property
    def scores(self) -> tuple[int, ...]:
        """Scores by seat."""
        return tuple(s.score for s in self.seats)

    @property
    def placings(self) -> tuple[int, ...]:
        """Placings by seat (1 = best; forfeited seats share the last)."""
        return tuple(s.placing for s in self.seats)
