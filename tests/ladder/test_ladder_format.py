"""The ladder format's rule (arena/tournament/formats/ladder.py): property tests with Hypothesis
on simulated results (no processes): deterministic, whole duplicate groups of 2-4 active
entries, uncertain bots first, similar opponents, a fairness floor, a changing active set."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.formats import REGISTRY, Finished, History, Play, Recorded, Settings, Wait, make
from arena.tournament.formats.ladder import Ladder, ratings_option, summarise


def _ladder(entries: int, sizes: tuple[int, ...], seed: int, **options: object) -> Ladder:
    fmt = make("ladder", Settings(entries=entries, table_sizes=sizes, games=1, seed=seed, options=options))
    assert isinstance(fmt, Ladder)
    return fmt


def _finish(history: History, play: Play, strength: list[float], rng: random.Random) -> History:
    """Play every match of ``play`` at once: placings by strength plus noise."""
    done = []
    for i, p in enumerate(play.pairings):
        value = [strength[e] + rng.uniform(0, 1.0) for e in p.seating]
        placings = tuple(1 + sum(1 for w in value if w > v) for v in value)
        done.append(
            Recorded(len(history.matches) + i, p.round, p.group, p.seed, p.seating, "finished", placings,
                     tuple(0 for _ in p.seating))
        )  # fmt: skip
    return History((*history.matches, *done))


def _simulate(fmt: Ladder, tables: int, strength: list[float], seed: int) -> tuple[History, list[Play]]:
    rng = random.Random(seed)
    history = History()
    plays = []
    for _ in range(tables):
        answer = fmt.next(history)
        assert isinstance(answer, Play), answer
        plays.append(answer)
        history = _finish(history, answer, strength, rng)
    return history, plays


def test_registered() -> None:
    assert REGISTRY["ladder"] is Ladder


sizes_st = st.lists(st.sampled_from([2, 3, 4]), min_size=1, max_size=3, unique=True).map(tuple)


@settings(max_examples=40, deadline=None)
@given(entries=st.integers(2, 9), sizes=sizes_st, seed=st.integers(0, 2**40), tables=st.integers(1, 25))
def test_groups_are_whole_rotations_of_active_entries(
    entries: int, sizes: tuple[int, ...], seed: int, tables: int
) -> None:
    fmt = _ladder(entries, sizes, seed)
    strength = [random.Random(seed + e).random() * 3 for e in range(entries)]
    _, plays = _simulate(fmt, tables, strength, seed)
    for g, play in enumerate(plays):
        table = play.pairings[0].seating
        k = min(sizes[g % len(sizes)], entries)
        assert len(table) == k and len(set(table)) == k
        assert [p.seating for p in play.pairings] == [table[r:] + table[:r] for r in range(k)]
        assert {p.seed for p in play.pairings} == {play.pairings[0].seed}
        assert {p.group for p in play.pairings} == {f"L{g}"} and {p.round for p in play.pairings} == {g}


@settings(max_examples=30, deadline=None)
@given(entries=st.integers(2, 8), sizes=sizes_st, seed=st.integers(0, 2**40), tables=st.integers(1, 20))
def test_deterministic_for_a_seed(entries: int, sizes: tuple[int, ...], seed: int, tables: int) -> None:
    strength = [float(e % 3) for e in range(entries)]
    a = _simulate(_ladder(entries, sizes, seed), tables, strength, 1)[1]
    b = _simulate(_ladder(entries, sizes, seed), tables, strength, 1)[1]
    assert a == b
    other = _simulate(_ladder(entries, sizes, seed + 1), tables, strength, 1)[1]
    assert [p.pairings[0].seed for p in other] != [p.pairings[0].seed for p in a]


@settings(max_examples=30, deadline=None)
@given(entries=st.integers(3, 10), sizes=sizes_st, seed=st.integers(0, 2**40))
def test_fairness_floor(entries: int, sizes: tuple[int, ...], seed: int) -> None:
    """Every active entry sits at a table at least once in every ``floor + entries`` tables,
    however lopsided the strengths (a hopeless bot keeps playing)."""
    fmt = _ladder(entries, sizes, seed)
    strength = [100.0 if e == 0 else float(e) for e in range(entries)]
    _, plays = _simulate(fmt, 6 * entries, strength, seed)
    bound = fmt.floor(entries) + entries
    last = dict.fromkeys(range(entries), -1)
    for g, play in enumerate(plays):
        for e in play.pairings[0].seating:
            assert g - last[e] <= bound, (e, g, last[e])
            last[e] = g
    assert all(len(plays) - last[e] <= bound for e in range(entries))


@settings(max_examples=30, deadline=None)
@given(entries=st.integers(3, 10), sizes=sizes_st, seed=st.integers(0, 2**40))
def test_fairness_floor_against_a_stuck_rating(entries: int, sizes: tuple[int, ...], seed: int) -> None:
    """Ratings that never settle (entry 0 always the most uncertain, the others far apart in
    mu): the uncertainty rule alone would seat only 0 and its neighbours; the floor seats
    everyone at least once in every ``floor + entries`` tables."""
    frozen = {e: (10.0 * e, 8.0 if e == 0 else 1.0, 10) for e in range(entries)}
    fmt = _ladder(entries, sizes, seed, ratings=ratings_option(frozen))
    _, plays = _simulate(fmt, 5 * entries, [0.0] * entries, seed)
    bound = fmt.floor(entries) + entries
    last = dict.fromkeys(range(entries), -1)
    for g, play in enumerate(plays):
        for e in play.pairings[0].seating:
            assert g - last[e] <= bound, (e, g, last[e])
            last[e] = g
    assert all(len(plays) - last[e] <= bound for e in range(entries))


def test_new_and_uncertain_bots_play_first() -> None:
    """Entry 5 joins a ladder whose entries 0-4 are well known: it sits at each of the next
    tables (largest sigma) until its sigma is no longer the largest."""
    known = {e: (25.0 + e, 1.0, 200) for e in range(5)}
    fmt = _ladder(6, (2,), 3, ratings=ratings_option(known))
    play = fmt.next(History())
    assert isinstance(play, Play) and play.pairings[0].seating[0] == 5
    # with the newcomer as certain as the rest, the most uncertain of them is the anchor
    known2 = {**known, 5: (25.0, 0.5, 50), 2: (27.0, 3.0, 20)}
    play = _ladder(6, (2,), 3, ratings=ratings_option(known2)).next(History())
    assert isinstance(play, Play) and play.pairings[0].seating[0] == 2


def test_opponents_of_similar_rating() -> None:
    mus = [10.0, 20.0, 24.0, 25.5, 26.0, 40.0]
    ratings = {e: (mu, 1.0, 100) for e, mu in enumerate(mus)}
    ratings[3] = (25.5, 2.0, 100)  # the anchor: most uncertain
    play = _ladder(6, (3,), 9, ratings=ratings_option(ratings)).next(History())
    assert isinstance(play, Play)
    assert play.pairings[0].seating[0] == 3 and set(play.pairings[0].seating) == {3, 4, 2}


def test_ratings_from_history_match_the_ratings_option() -> None:
    """A ladder given its ratings and history summary answers as one that derives them."""
    fmt = _ladder(5, (2, 4), 11)
    history, _ = _simulate(fmt, 12, [0.0, 1.0, 2.0, 3.0, 4.0], 5)
    from arena.tournament.formats.ladder import replay_ratings

    rated = {e: (s.mu, s.sigma, n) for e, (s, n) in replay_ratings(history).items()}
    given = _ladder(5, (2, 4), 11, ratings=ratings_option(rated), summary=summarise(history).to_json())
    assert given.next(History()) == fmt.next(history)


def test_active_set_changes() -> None:
    fmt = _ladder(6, (2, 3), 4, active=[0, 2, 3])
    history, plays = _simulate(fmt, 10, [1.0] * 6, 2)
    assert {e for p in plays for e in p.pairings[0].seating} <= {0, 2, 3}
    joined = _ladder(6, (2, 3), 4, active=[0, 2, 3, 5])  # 5 joins: it is new, so it plays next
    play = joined.next(history)
    assert isinstance(play, Play) and play.pairings[0].seating[0] == 5


def test_waits_and_finishes() -> None:
    fmt = _ladder(4, (2,), 1, inflight=1)
    play = fmt.next(History())
    assert isinstance(play, Play)
    queued = History(tuple(
        Recorded(i, p.round, p.group, p.seed, p.seating, "running") for i, p in enumerate(play.pairings)
    ))  # fmt: skip
    assert fmt.next(queued) == Wait()  # one group in flight is the limit
    assert _ladder(4, (2,), 1, inflight=2).next(queued) != Wait()
    assert _ladder(4, (2,), 1, active=[2]).next(History()) == Wait()  # one active bot: no table
    bounded = _ladder(4, (2,), 1, max_tables=2)
    history, _ = _simulate(bounded, 2, [0.0] * 4, 1)
    assert bounded.next(history) == Finished()
