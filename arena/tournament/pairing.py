"""Pairing: which bots meet at which table, in which seats, with which seeds.

Tournament kinds implement only pairing.  Every table is played under every cyclic seat rotation
with the same match seed ("duplicate dice"), so each bot meets the same dice from every seat and
luck cancels out; the matches of one table and seed form a duplicate *group*.

A cyclic rotation keeps who sits directly after whom.  At tables of 3 or 4 the order around the
table is therefore chosen per table and seed (:func:`orient`) so that over the schedule each of
two bots sits directly after the other about as often (in field order every table had the
later-listed bot after the earlier one: bot 1 always played right after bot 0).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from dataclasses import dataclass
from itertools import combinations, permutations

from arena.engine.chance import SEED_LIMIT

MAX_TABLES = 400  # above this many combinations a balanced subset is drawn


@dataclass(frozen=True)
class Pairing:
    """One match of the schedule: entries (indices into the field) by seat, and its seed."""

    ordinal: int
    seed: int
    group: str
    seating: tuple[int, ...]


def derive_seed(seed: int, *parts: int) -> int:
    """A match seed derived from the tournament seed and the table/game numbers."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") % SEED_LIMIT


def rotations(table: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cyclic seat rotation: each entry sits in each seat once."""
    return [table[r:] + table[:r] for r in range(len(table))]


def _neighbours(order: tuple[int, ...]) -> list[tuple[int, int]]:
    """``(a, b)`` for each entry ``b`` that sits directly after ``a`` around the table."""
    return [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]


def orient(table: tuple[int, ...], follows: Counter[tuple[int, int]]) -> tuple[int, ...]:
    """The order around ``table`` (its first entry kept first) that most evens out ``follows``
    (``(a, b)``: how often ``b`` sat directly after ``a`` so far), which it then updates; among
    equally good orders the one given (so two-player tables are as given)."""
    first, rest = table[0], table[1:]

    def skew(order: tuple[int, ...]) -> int:
        return sum(follows[(a, b)] - follows[(b, a)] for a, b in _neighbours(order))

    best = min(((first, *p) for p in permutations(rest)), key=skew)
    for pair in _neighbours(best):
        follows[pair] += 1
    return best


def table_count(n: int, k: int, limit: int = MAX_TABLES) -> int:
    """How many tables :func:`balanced_tables` gives (without drawing them)."""
    return min(math.comb(n, k), limit) if 0 <= k <= n else 0


def balanced_tables(n: int, k: int, limit: int, seed: int) -> list[tuple[int, ...]]:
    """All k-combinations of n entries, or at most ``limit`` of them in which every entry appears
    about equally often (drawn reproducibly from ``seed``)."""
    if k > n:
        raise ValueError(f"a table of {k} needs at least {k} bots, got {n}")
    total = math.comb(n, k)
    if total <= limit:
        return list(combinations(range(n), k))
    rng = random.Random(seed)
    counts = [0] * n
    tables: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    misses = 0
    while len(tables) < limit:
        # the least-used entries first, ties broken at random; after a table already drawn, the
        # counts get a growing random jitter (a uniformly random table could skew them by 3+)
        order = sorted(
            range(n), key=lambda i: (counts[i] + rng.random() * misses if misses else counts[i], rng.random())
        )
        table = tuple(sorted(order[:k]))
        if table in seen:
            misses += 1
            continue
        misses = 0
        seen.add(table)
        tables.append(table)
        for i in table:
            counts[i] += 1
    return tables


def round_robin(
    n: int, table_size: int, games: int, seed: int, *, max_tables: int = MAX_TABLES
) -> list[Pairing]:
    """Every table of ``table_size`` of the ``n`` entries (or a balanced subset), ``games`` seeds
    per table, each under every seat rotation.  Ordered seed-major, so a partly played schedule
    is still balanced."""
    tables = balanced_tables(n, table_size, max_tables, seed)
    out: list[Pairing] = []
    follows: Counter[tuple[int, int]] = Counter()
    for game in range(games):
        for t, table in enumerate(tables):
            match_seed = derive_seed(seed, t, game)
            for seating in rotations(orient(table, follows)):
                out.append(Pairing(len(out), match_seed, f"t{t}g{game}", seating))
    return out


def gauntlet(
    n_field: int, table_size: int, games: int, seed: int, *, max_tables: int = MAX_TABLES
) -> list[Pairing]:
    """A candidate (entry 0) against the field (entries 1..n_field): every table of the
    candidate and ``table_size - 1`` field bots, ``games`` seeds each, every seat rotation."""
    others = balanced_tables(n_field, table_size - 1, max_tables, seed)
    out: list[Pairing] = []
    follows: Counter[tuple[int, int]] = Counter()
    for game in range(games):
        for t, rest in enumerate(others):
            table = (0, *(1 + i for i in rest))
            match_seed = derive_seed(seed, t, game)
            for seating in rotations(orient(table, follows)):
                out.append(Pairing(len(out), match_seed, f"t{t}g{game}", seating))
    return out
