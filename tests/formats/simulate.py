"""Play a format to the end without processes: placings come from a function of the seating."""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.tournament.formats import Finished, Format, History, Play, Recorded, Wait

Placer = Callable[[tuple[int, ...], int], tuple[int, ...]]


def by_strength(strength: list[float], noise: float = 0.0) -> Placer:
    """Placings by ``strength`` (higher is better) plus seeded noise; equal values share a place."""

    def place(seating: tuple[int, ...], seed: int) -> tuple[int, ...]:
        rng = random.Random(seed * 1_000_003 + hash(seating) % 997)
        value = [strength[e] + rng.uniform(0, noise) for e in seating]
        return tuple(1 + sum(1 for w in value if w > v) for v in value)

    return place


def run(fmt: Format, place: Placer, *, limit: int = 10_000) -> tuple[History, list[Play]]:
    """Ask ``fmt`` until it is finished, playing every handed-out match at once; return the
    final history and every answer."""
    history = History()
    plays: list[Play] = []
    for _ in range(limit):
        answer = fmt.next(history)
        if isinstance(answer, Finished):
            return history, plays
        assert not isinstance(answer, Wait), "a format waited with every match done"
        assert answer.pairings or answer.byes, "an empty answer"
        plays.append(answer)
        assert fmt.next(_queued(history, answer)) == Wait(), "handed out twice"
        done = [
            Recorded(len(history.matches) + i, p.round, p.group, p.seed, p.seating, "finished",
                     place(p.seating, p.seed), tuple(0 for _ in p.seating))
            for i, p in enumerate(answer.pairings)
        ]  # fmt: skip
        history = History((*history.matches, *done), (*history.byes, *answer.byes))
    raise AssertionError("the format never finished")


def _queued(history: History, answer: Play) -> History:
    queued = [
        Recorded(len(history.matches) + i, p.round, p.group, p.seed, p.seating, "queued")
        for i, p in enumerate(answer.pairings)
    ]
    return History((*history.matches, *queued), (*history.byes, *answer.byes))
