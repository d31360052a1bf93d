"""Round robin and gauntlet as formats: one seed per duplicate group, at every table size."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=40, deadline=None)
@given(
    fmt=st.sampled_from(["round-robin", "gauntlet"]),
    entries=st.integers(4, 16),
    sizes=st.sets(st.integers(2, 4), min_size=1).map(lambda s: tuple(sorted(s))),
    games=st.integers(1, 3),
)
def test_planned_counts_the_schedule_without_building_it(
    fmt: str, entries: int, sizes: tuple[int, ...], games: int
) -> None:
    """``planned()`` is computed (a schedule of millions of matches took minutes to build only
    to be counted); it must stay the schedule's length, balanced subsets included (16 bots at
    tables of 4: 1,820 tables, 400 drawn)."""
    f = make(fmt, Settings(entries, sizes, games, seed=9))
    assert f.planned() == len(f.schedule())


def test_a_tournament_of_more_than_a_million_matches_is_refused(tmp_path: Path) -> None:
    """4 bots at tables of 2, 3 and 4 make 28 matches a game: 100,000 games would be 2.8 million
    (refused before anything is stored); 35,715 would be one game too many."""
    from arena.store.db import Database
    from arena.store.tournaments import list_tournaments
    from arena.tournament.service import MAX_MATCHES, TournamentConfigError, create

    db = Database(f"sqlite:///{tmp_path / 'a.db'}")
    bots = ["random", "greedy", "greedy-naive", "invader"]
    with pytest.raises(TournamentConfigError, match="would have 2,800,000 matches, more than the 1,000,000"):
        create(db, bots, table_sizes=(2, 3, 4), games=100_000)
    with pytest.raises(TournamentConfigError, match="would have 1,000,020 matches"):
        create(db, bots, table_sizes=(2, 3, 4), games=MAX_MATCHES // 28 + 1)
    assert list_tournaments(db) == []
    made = create(db, bots, table_sizes=(2, 3, 4), games=2)
    assert made.games == 2
    db.close()
