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


@pytest.mark.parametrize("fmt", ["round-robin", "gauntlet"])
@pytest.mark.parametrize("sizes", [(2, 4), (2, 3, 4), (4, 2)])
def test_table_sizes_are_interleaved_so_a_run_stopped_partway_has_played_a_share_of_each(
    fmt: str, sizes: tuple[int, ...]
) -> None:
    """The sizes' schedules used to follow one another (every 2-player match before the first
    4-player one), so a run stopped halfway had no result at the later size. Now at every point
    each size is as far along as the others, to within one duplicate group; within a size the
    order and the groups are kept, and each group's matches stay together."""
    f = make(fmt, Settings(6, sizes, 3, seed=5))
    assert isinstance(f, RoundRobin | Gauntlet)
    schedule = f.schedule()
    by_size: dict[int, list[str]] = defaultdict(list)
    for p in schedule:
        by_size[len(p.seating)].append(p.group)
    # the same matches as each size's own schedule, in its order
    for k in sizes:
        alone = make(fmt, Settings(6, (k,), 3, seed=5))
        assert isinstance(alone, RoundRobin | Gauntlet)
        assert [(p.seed, p.group, p.seating) for p in schedule if len(p.seating) == k] == [
            (p.seed, p.group, p.seating) for p in alone.schedule()
        ]
    # groups are contiguous
    seen: list[str] = []
    for p in schedule:
        if not seen or seen[-1] != p.group:
            assert p.group not in seen, p.group
            seen.append(p.group)
    # every prefix of groups: the sizes' shares done differ by at most one group's share
    total = {k: len(set(by_size[k])) for k in sizes}
    done = dict.fromkeys(sizes, 0)
    for group in seen:
        done[int(group.split("p-")[0])] += 1
        shares = [done[k] / total[k] for k in sizes]
        assert max(shares) - min(shares) <= max(1 / total[k] for k in sizes) + 1e-9, (group, done)
    # the first group: from the size with the most groups (its share grows least), the size
    # listed first among equals
    most = max(total.values())
    assert int(seen[0].split("p-")[0]) == next(k for k in sizes if total[k] == most), total
