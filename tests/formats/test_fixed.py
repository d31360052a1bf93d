"""Round robin and gauntlet as formats: one seed per duplicate group, at every table size."""

from __future__ import annotations

from collections import defaultdict

import pytest

from arena.tournament.formats import Settings, make
from arena.tournament.formats.fixed import Gauntlet, RoundRobin


@pytest.mark.parametrize("fmt", ["round-robin", "gauntlet"])
@pytest.mark.parametrize("sizes", [(2, 4), (2, 3, 4), (3, 4)])
def test_each_seed_is_one_groups_dice_at_mixed_table_sizes(fmt: str, sizes: tuple[int, ...]) -> None:
    """A gauntlet at --tables 2,4 gave its 2-player table t0 and its 4-player table t0 the same
    seed (the round robin adds the table size to the seed): the candidate met the same dice in two
    groups, and the groups of the two sizes could not be played at once (one seed at a time)."""
    f = make(fmt, Settings(6, sizes, 2, seed=5))
    assert isinstance(f, RoundRobin | Gauntlet)
    groups: dict[int, set[str]] = defaultdict(set)
    for p in f.schedule():
        groups[p.seed].add(p.group)
    assert all(len(g) == 1 for g in groups.values()), {s: g for s, g in groups.items() if len(g) > 1}
