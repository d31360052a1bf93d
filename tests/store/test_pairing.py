"""Pairing (pure): round robin, gauntlet, balanced tables, seat rotations, duplicate dice."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import pytest

from arena.engine.chance import SEED_LIMIT
from arena.tournament.pairing import Pairing, balanced_tables, derive_seed, gauntlet, round_robin


def _check_groups(schedule: list[Pairing], k: int) -> None:
    groups: dict[str, list[Pairing]] = defaultdict(list)
    for p in schedule:
        groups[p.group].append(p)
    for key, members in groups.items():
        assert len(members) == k, f"group {key} has {len(members)} rotations, expected {k}"
        assert len({p.seed for p in members}) == 1, f"group {key} mixes dice seeds"
        table = set(members[0].seating)
        assert len(table) == k
        for seat in range(k):  # every entry of the table sits in every seat once
            assert {p.seating[seat] for p in members} == table
    assert len({members[0].seed for members in groups.values()}) == len(groups), "seeds are reused"


@pytest.mark.parametrize(
    ("n", "k", "games"), [(2, 2, 3), (3, 2, 2), (4, 3, 2), (5, 4, 1), (6, 2, 1), (7, 3, 1)]
)
def test_round_robin(n: int, k: int, games: int) -> None:
    schedule = round_robin(n, k, games, seed=42)
    assert len(schedule) == math.comb(n, k) * k * games
    assert [p.ordinal for p in schedule] == list(range(len(schedule)))
    assert all(len(p.seating) == k and len(set(p.seating)) == k for p in schedule)
    assert all(0 <= e < n for p in schedule for e in p.seating)
    assert all(0 <= p.seed < SEED_LIMIT for p in schedule)
    seats = Counter((e, seat) for p in schedule for seat, e in enumerate(p.seating))
    expected = math.comb(n - 1, k - 1) * games  # tables containing a given bot, times games
    assert seats == {(e, s): expected for e in range(n) for s in range(k)}
    tables = Counter(tuple(sorted(p.seating)) for p in schedule)
    assert set(tables.values()) == {k * games}
    _check_groups(schedule, k)
    assert round_robin(n, k, games, seed=42) == schedule  # reproducible
    other = round_robin(n, k, games, seed=43)
    assert [p.seed for p in other] != [p.seed for p in schedule]


def test_round_robin_is_seed_major() -> None:
    """All tables of game 0 come before any table of game 1 (a partly played run stays balanced)."""
    schedule = round_robin(4, 2, 3, seed=1)
    games = [int(p.group.split("g")[1]) for p in schedule]
    assert games == sorted(games)


def test_derive_seed() -> None:
    assert derive_seed(5, 0, 0) == derive_seed(5, 0, 0)
    values = {derive_seed(s, t, g) for s in range(4) for t in range(4) for g in range(4)}
    assert len(values) == 64
    assert all(0 <= v < SEED_LIMIT for v in values)
    assert derive_seed(5, 1, 2) != derive_seed(5, 2, 1)
    assert derive_seed(2**63 - 1, 399, 99) < SEED_LIMIT


@pytest.mark.parametrize(("n_field", "k", "games"), [(1, 2, 2), (3, 2, 1), (3, 3, 2), (4, 4, 1)])
def test_gauntlet(n_field: int, k: int, games: int) -> None:
    schedule = gauntlet(n_field, k, games, seed=7)
    assert len(schedule) == math.comb(n_field, k - 1) * k * games
    assert all(p.seating.count(0) == 1 for p in schedule), "the candidate is in every match"
    assert Counter(p.seating.index(0) for p in schedule) == {s: len(schedule) // k for s in range(k)}
    assert {e for p in schedule for e in p.seating} == set(range(n_field + 1))
    _check_groups(schedule, k)


def test_balanced_tables_small_is_every_combination() -> None:
    assert balanced_tables(5, 3, 100, seed=1) == [
        (0, 1, 2), (0, 1, 3), (0, 1, 4), (0, 2, 3), (0, 2, 4),
        (0, 3, 4), (1, 2, 3), (1, 2, 4), (1, 3, 4), (2, 3, 4),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="needs at least 4 bots"):
        balanced_tables(3, 4, 10, seed=1)


@pytest.mark.parametrize(("n", "k", "limit"), [(12, 4, 60), (10, 3, 25), (13, 4, 50), (9, 3, 30)])
def test_balanced_tables_large(n: int, k: int, limit: int) -> None:
    for seed in range(25):
        tables = balanced_tables(n, k, limit, seed)
        assert len(tables) == limit
        assert len(set(tables)) == limit, "tables repeat"
        assert all(t == tuple(sorted(t)) and len(set(t)) == k and all(0 <= e < n for e in t) for t in tables)
        counts = Counter(e for t in tables for e in t)
        assert set(counts) == set(range(n))
        assert max(counts.values()) - min(counts.values()) <= 2, (seed, counts)
        assert balanced_tables(n, k, limit, seed) == tables


def test_round_robin_over_the_table_limit_stays_balanced() -> None:
    schedule = round_robin(12, 4, 1, seed=3, max_tables=60)
    assert len(schedule) == 60 * 4
    seats = Counter((e, seat) for p in schedule for seat, e in enumerate(p.seating))
    per_bot = Counter(e for p in schedule for e in p.seating)
    assert max(per_bot.values()) - min(per_bot.values()) <= 2 * 4
    for e in range(12):  # rotations: a bot's games are spread evenly over the seats
        assert len({seats[(e, s)] for s in range(4)}) == 1
    _check_groups(schedule, 4)


def _follows_skew(schedule: list[Pairing]) -> int:
    """The most, over two entries, by which one sat directly after the other more often than the
    other way round (once per duplicate group: its rotations keep the order around the table)."""
    follows: Counter[tuple[int, int]] = Counter()
    seen: set[str] = set()
    for p in schedule:
        if p.group not in seen:
            seen.add(p.group)
            k = len(p.seating)
            follows.update((p.seating[i], p.seating[(i + 1) % k]) for i in range(k))
    entries = sorted({e for p in schedule for e in p.seating})
    return max(abs(follows[(a, b)] - follows[(b, a)]) for a in entries for b in entries if a < b)


@pytest.mark.parametrize(("n", "k", "games"), [(5, 4, 1), (7, 4, 2), (4, 3, 1), (6, 3, 2), (8, 4, 1)])
def test_who_sits_after_whom_is_balanced(n: int, k: int, games: int) -> None:
    """Cyclic rotations keep the order around a table: with every table in field order, bot 1
    sat directly after bot 0 at each of their tables and never the other way round (at 7 bots'
    4-player tables, 20 times to 0 with --games 2). Now each of two bots follows the other about
    equally often, in a round robin and in a gauntlet, and every seat rotation is still played."""
    schedule = round_robin(n, k, games, seed=3)
    assert _follows_skew(schedule) <= 1
    _check_groups(schedule, k)
    field = gauntlet(n - 1, k, games, seed=3)
    assert _follows_skew(field) <= 1
    _check_groups(field, k)
    assert all(p.seating.count(0) == 1 for p in field)
