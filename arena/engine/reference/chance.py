"""FROZEN REFERENCE COPY of ``arena/engine/chance.py`` as of commit d3168dd (before issue 20).

Do not optimise or change this module: it is the plain baseline that ``benchmarks/engine.py``
measures the engine against, and the independent oracle that ``tests/engine/test_fast_vs_reference.py``
checks the engine with (same legal actions, states, scores and records).  Original docstring:

Chance: the exact distribution of a throw, and the counter-based dice stream (rules.md §5).

The engine never draws random numbers.  The referee (or any caller) takes throws from
:func:`stream_faces`, which is a pure function of (seed, turn, throw); a search bot enumerates
:func:`throw_distribution`.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from functools import cache
from math import factorial
from typing import Final

from ..board import N_DICE, N_FACES

SEED_LIMIT: Final = 2**63


def compositions(k: int, parts: int = N_FACES) -> list[tuple[int, ...]]:
    """Every way to split ``k`` dice into per-face counts, in lexicographic order."""
    if parts == 1:
        return [(k,)]
    out: list[tuple[int, ...]] = []
    for first in range(k, -1, -1):
        out += [(first, *rest) for rest in compositions(k - first, parts - 1)]
    return out


@cache
def throw_distribution(k: int) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """The exact multinomial distribution of a throw of ``k`` fair six-faced dice (R1).

    Returns ``(counts, probability)`` pairs, counts per face (6 ints, face 5 = lifeguard); the
    probabilities are exact fractions summing to 1.
    """
    if not 0 <= k <= N_DICE:
        raise ValueError(f"a throw uses 0..{N_DICE} dice, got {k}")
    total = N_FACES**k
    out = []
    for counts in compositions(k):
        ways = factorial(k)
        for c in counts:
            ways //= factorial(c)
        out.append((counts, Fraction(ways, total)))
    return tuple(out)


@cache
def throw_distribution_float(k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """:func:`throw_distribution` with float probabilities (for fast planning)."""
    return tuple((c, float(p)) for c, p in throw_distribution(k))


def stream_faces(seed: int, turn: int, throw: int) -> tuple[int, ...]:
    """The six faces of the counter-based dice stream for ``(seed, turn, throw)`` (rules.md §5).

    SHA-256 of ``"<seed>:<turn>:<throw>"``; bytes >= 252 are skipped, every other byte ``b``
    gives face ``b % 6``; when the 32 bytes run out, the next block is SHA-256 of the previous
    32 raw bytes.  A throw of k dice shows the first k faces.
    """
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be 0 <= seed < 2**63, got {seed}")
    block = hashlib.sha256(f"{seed}:{turn}:{throw}".encode("ascii")).digest()
    faces: list[int] = []
    while True:
        for b in block:
            if b < 252:
                faces.append(b % 6)
                if len(faces) == N_DICE:
                    return tuple(faces)
        block = hashlib.sha256(block).digest()


class DiceStream:
    """The dice of one match: ``throw(turn, throw_no, k)`` gives the first k stream faces."""

    __slots__ = ("seed",)

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < SEED_LIMIT:
            raise ValueError(f"seed must be 0 <= seed < 2**63, got {seed}")
        self.seed = seed

    def throw(self, turn: int, throw_no: int, k: int) -> tuple[int, ...]:
        """The faces of throw ``throw_no`` (from 1) of game turn ``turn`` (from 1), k dice."""
        return stream_faces(self.seed, turn, throw_no)[:k]
