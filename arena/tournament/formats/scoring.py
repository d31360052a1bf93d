"""Points from placings: what Swiss standings and knockout winners are decided by.

In one match a seat scores ``(opponents placed below it + half the opponents sharing its place)
/ (players - 1)``: 1 for a clear win, 0 for a clear last, 0.5 each in a two-player tie.  A
duplicate-dice group scores the mean over its matches, so a group is worth at most 1 point
whatever the table size; a failed match (the arena could not play it) scores 0 for every seat.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .base import Recorded


def match_points(placings: tuple[int, ...], seat: int) -> float:
    """What ``seat`` scored in a match that ended with ``placings`` (1 = best, shared places share)."""
    mine = placings[seat]
    others = [p for i, p in enumerate(placings) if i != seat]
    if not others:
        return 0.0
    return (sum(1 for p in others if p > mine) + 0.5 * sum(1 for p in others if p == mine)) / len(others)


def group_points(matches: Iterable[Recorded]) -> tuple[dict[int, float], dict[int, int]]:
    """Per entry: points summed over groups (each group the mean of its matches), and the total
    in-game score (a tie-break)."""
    by_group: dict[str, list[Recorded]] = defaultdict(list)
    for m in matches:
        by_group[m.group].append(m)
    points: dict[int, float] = defaultdict(float)
    score: dict[int, int] = defaultdict(int)
    for ms in by_group.values():
        for m in ms:
            for seat, entry in enumerate(m.seating):
                points[entry] += 0.0
                if m.placings is not None:
                    points[entry] += match_points(m.placings, seat) / len(ms)
                if m.scores is not None:
                    score[entry] += m.scores[seat]
    return dict(points), dict(score)
