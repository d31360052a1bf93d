"""Chance: the exact distribution of a throw, and the counter-based dice stream (rules.md §5).

The engine never draws random numbers.  The referee (or any caller) takes throws from
:func:`stream_faces`, which is a pure function of (seed, turn, throw); a search bot enumerates
:func:`throw_distribution`.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from hashlib import sha256
from math import factorial
from typing import Final

from .board import N_DICE, N_FACES

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
    if type(seed) is int and type(turn) is int and type(throw) is int:
        return _faces(b"%d:%d:%d" % (seed, turn, throw), N_DICE)
    return _faces(f"{seed}:{turn}:{throw}".encode("ascii"), N_DICE)  # a bool prints as True


# Byte -> face for bytes.translate; the bytes 252..255 are deleted (skipped), as §5 says.
_FACE_OF_BYTE: Final = bytes(b % 6 if b < 252 else 0 for b in range(256))
_SKIPPED_BYTES: Final = bytes(range(252, 256))


# The last throw this module handed out, and its faces as bytes: ``(faces, bytes(faces))``, one
# tuple so that it is replaced atomically.  The rules use it to skip ``bytes(faces)`` when they
# are given exactly that tuple object (an identity check, so any other object is converted).
LAST_THROW: list[tuple[tuple[int, ...], bytes]] = [((), b"")]


def _faces(text: bytes, k: int) -> tuple[int, ...]:
    """The first ``k`` (0..6) faces of the stream for the counter text ``text``.

    The common case runs in C: one ``bytes.translate`` maps the first block's 32 bytes to faces
    and drops the skipped ones; only when fewer than ``k`` are left (27 or more of the 32 bytes
    skipped: odds below 1 in 10**40) are the further blocks walked byte by byte.
    """
    block = sha256(text).digest()
    faces = block.translate(_FACE_OF_BYTE, _SKIPPED_BYTES)
    if len(faces) >= k:
        faces = faces[:k]
        out = tuple(faces)
        LAST_THROW[0] = (out, faces)
        return out
    return _faces_walked(block)[:k]


def _faces_walked(block: bytes) -> tuple[int, ...]:
    """The six faces from the first block ``block`` on, byte by byte (the text of §5)."""
    faces: list[int] = []
    while True:
        for b in block:
            if b < 252:
                faces.append(b % 6)
                if len(faces) == N_DICE:
                    return tuple(faces)
        block = sha256(block).digest()


class DiceStream:
    """The dice of one match: ``throw(turn, throw_no, k)`` gives the first k stream faces.

    ``seed`` is read-only (the counter text's prefix is prepared once from it).
    """

    __slots__ = ("_prefix", "_seed")

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < SEED_LIMIT:
            raise ValueError(f"seed must be 0 <= seed < 2**63, got {seed}")
        self._seed = seed
        self._prefix = b"%d:" % seed if type(seed) is int else None

    @property
    def seed(self) -> int:
        """The match seed (0 <= seed < 2**63)."""
        return self._seed

    def throw(self, turn: int, throw_no: int, k: int) -> tuple[int, ...]:
        """The faces of throw ``throw_no`` (from 1) of game turn ``turn`` (from 1), k dice."""
        prefix = self._prefix
        if prefix is not None and type(turn) is int and type(throw_no) is int and 0 <= k <= N_DICE:
            # _faces, inlined (this runs once per throw of every game)
            block = sha256(prefix + b"%d:%d" % (turn, throw_no)).digest()
            faces = block.translate(_FACE_OF_BYTE, _SKIPPED_BYTES)
            if len(faces) >= k:
                faces = faces[:k]
                out = tuple(faces)
                LAST_THROW[0] = (out, faces)
                return out
        return stream_faces(self._seed, turn, throw_no)[:k]
