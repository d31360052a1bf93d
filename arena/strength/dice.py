"""Dice multisets as one int, and every outcome of a throw with its exact probability.

A multiset of dice is packed into an int, 3 bits per face (counts 0..6), face ``f`` at bits
``3f..3f+2``, so adding two codes adds the multisets; the lifeguard (face 5, R2) sits at bits
15..17.  The planners in :mod:`arena.strength.rolling` key their memo tables by these codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import product
from typing import Final

from arena.engine import throw_distribution_float
from arena.engine.board import LIFEGUARD, N_COLOURS, N_DICE

LG_SHIFT: Final = 3 * LIFEGUARD
CHIPS_SHIFT: Final = 18  # memo keys put the chips left above the dice


def dice_code(counts: Sequence[int]) -> int:
    """The int code of per-face counts (5 colour counts, optionally the lifeguard count)."""
    return sum(c << (3 * f) for f, c in enumerate(counts))


def count_of(code: int, face: int) -> int:
    """How many dice of ``face`` the multiset ``code`` holds."""
    return code >> (3 * face) & 7


# (code of the throw, code of its lifeguards only, probability,
#  keeps: (code of the kept colour dice, colour dice left to throw) for every legal KEEP)
Outcome = tuple[int, int, float, tuple[tuple[int, int], ...]]


def keeps_of(colours: Sequence[int]) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every legal KEEP of a throw with per-colour ``colours`` (R12, R13): (kept counts, dice left).

    A KEEP sets aside a non-empty selection of the colour dice and leaves at least one to throw,
    so a throw with fewer than two colour dice has none (R13)."""
    total = sum(colours)
    return tuple((s, total - sum(s)) for s in product(*(range(n + 1) for n in colours)) if 0 < sum(s) < total)


@cache
def throw_outcomes(k: int) -> tuple[Outcome, ...]:
    """Every outcome of a throw of ``k`` dice (the exact multinomial of R1) with its legal KEEPs.

    The probabilities are :func:`arena.engine.throw_distribution_float` (they sum to 1)."""
    out = []
    for counts, p in throw_distribution_float(k):
        keeps = tuple((dice_code(s), left) for s, left in keeps_of(counts[:N_COLOURS]))
        out.append((dice_code(counts), counts[LIFEGUARD] << LG_SHIFT, p, keeps))
    return tuple(out)


def warm() -> None:
    """Build every outcome table (a bot calls this before its first deadline)."""
    for k in range(1, N_DICE + 1):
        throw_outcomes(k)
