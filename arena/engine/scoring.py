"""Scores, placings and the outcome of a game (R27, R28)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .board import LOUNGER_VALUE, N_LOUNGERS
from .state import State


def scores(state: State) -> tuple[int, ...]:
    """R27: secured own loungers by value, 1 per figure on a foreign towel, 1 per 2 chips."""
    pts = [c // 2 for c in state.chips]
    towel, secured, figure = state.towel, state.secured, state.figure
    for i in range(N_LOUNGERS):
        if secured[i]:
            pts[towel[i]] += LOUNGER_VALUE[i]
        elif figure[i] >= 0:
            pts[figure[i]] += 1
    return tuple(pts)


def placings(points: Sequence[float]) -> tuple[int, ...]:
    """R28: standard competition ranking, 1 = best; equal scores share a place (9, 9, 5 -> 1, 1, 3)."""
    return tuple(1 + sum(1 for q in points if q > p) for p in points)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: per-seat scores and placings, and how it ended."""

    scores: tuple[int, ...]
    placings: tuple[int, ...]
    termination: str


def outcome(state: State) -> Outcome:
    """The outcome of a finished game; ``ValueError`` if it is not over."""
    if not state.is_over or state.termination is None:
        raise ValueError("the game is not over")
    pts = scores(state)
    return Outcome(pts, placings(pts), state.termination)


def placings_with_forfeits(points: Sequence[float], forfeited: Sequence[int]) -> tuple[int, ...]:
    """Placings when some seats forfeited: the others by R28, the offenders share the last place."""
    out = [0] * len(points)
    alive = [s for s in range(len(points)) if s not in forfeited]
    for s in alive:
        out[s] = 1 + sum(1 for t in alive if points[t] > points[s])
    for s in forfeited:
        out[s] = len(alive) + 1
    return tuple(out)
