"""Knockout brackets: seeding, byes to a power of two, one winner, the tie rule."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.formats import FormatError, History, Play, Recorded, Settings, make
from arena.tournament.formats.knockout import Knockout, bracket_order

from .simulate import by_strength, run


@given(st.integers(0, 7))
def test_bracket_order(power: int) -> None:
    size = 1 << power
    order = bracket_order(size)
    assert sorted(order) == list(range(1, size + 1))
    if size >= 2:  # round 1: seed s meets seed size + 1 - s
        assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))
    if size >= 4:  # the two best seeds are in opposite halves (they can meet only in the final)
        half = size // 2
        assert (1 in order[:half]) != (2 in order[:half])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), games=st.integers(1, 2), data=st.data())
def test_single_elimination_to_one_winner(n: int, games: int, data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(n)))
    strength = data.draw(st.lists(st.floats(0, 10), min_size=n, max_size=n))
    fmt = make("knockout", Settings(n, (2,), games, seed=4, options={"order": list(order)}))
    history, plays = run(fmt, by_strength(strength, noise=3.0))
    size = 1 << (n - 1).bit_length()
    assert len(plays) == size.bit_length() - 1  # log2(size) rounds
    # byes: exactly size - n, all in round 1, to the best seeds
    assert [b.round for b in history.byes] == [1] * (size - n)
    assert {b.entry for b in history.byes} == set(order[: size - n])
    # each pairing: `games` duplicate groups of both seat rotations; n - 1 pairings in all
    pairings = Counter(frozenset(m.seating) for m in history.matches)
    assert len(pairings) == n - 1 and set(pairings.values()) == {2 * games}
    # everybody but the champion loses exactly once, and a loser never plays again
    assert isinstance(fmt, Knockout)
    lost: dict[int, int] = {}
    for rnd, play in enumerate(plays, start=1):
        for pair in {frozenset(p.seating) for p in play.pairings}:
            assert not pair & set(lost), "an eliminated entry played on"
            a, b = sorted(pair)
            ms = [m for m in history.matches if m.round == rnd and frozenset(m.seating) == pair]
            w = fmt.winner(a, b, ms)
            lost[a if w == b else b] = rnd
    assert len(lost) == n - 1
    report = fmt.report(history, [f"e{e}" for e in range(n)])
    assert len(report) == n - 1 + 2 and report[-2].startswith("champion: e")
    (champion,) = set(range(n)) - set(lost)
    assert report[-2] == f"champion: e{champion}"
    # places: the champion 1; whoever went out in a later round above whoever went out earlier;
    # every entry once; a shared place spans as many places as it has entries
    places = fmt.places(history)
    assert places[0] == ("1", [champion])
    assert sorted(e for _, es in places for e in es) == list(range(n))
    rounds_out = [lost[es[0]] for _, es in places[1:]]
    assert rounds_out == sorted(rounds_out, reverse=True) and len(set(rounds_out)) == len(rounds_out)
    above = 1
    for label, es in places[1:]:
        assert all(lost[e] == lost[es[0]] for e in es)
        assert es == sorted(es, key=fmt.seed_of)
        assert label == (f"{above + 1}" if len(es) == 1 else f"{above + 1}-{above + len(es)}")
        above += len(es)
    shown = "; ".join(f"{lab}. {', '.join(f'e{e}' for e in es)}" for lab, es in places)
    assert report[-1] == f"places: {shown}"
    assert fmt.ranking(history) == [e for _, es in places for e in es]  # the cross table's order
    assert fmt.ranking(History((), history.byes)) is None  # no champion yet
    if n >= 4:  # the semi-finals' two losers share 3-4 (or one loser: 3)
        assert places[1][0] == "2" and places[2][0] in ("3", "3-4")


def _finished(
    rnd: int, group: str, seating: tuple[int, int], placings: tuple[int, int], scores: tuple[int, int]
) -> Recorded:
    return Recorded(0, rnd, group, 1, seating, "finished", placings, scores)


def test_places_are_apart_from_the_entries_sharing_one() -> None:
    """Five entries (three byes): the places line keeps places apart by "; " and the entries of
    a shared place by ", " (with ", " for both, "3-4. c, d, 5. e" read as one list)."""
    fmt = make("knockout", Settings(5, (2,), 1, seed=2))
    history, _ = run(fmt, by_strength([5.0, 4.0, 3.0, 2.0, 1.0]))  # the better seed wins every pairing
    assert fmt.report(history, ["a", "b", "c", "d", "e"])[-1] == "places: 1. a; 2. b; 3-4. c, d; 5. e"


def test_ties_go_to_the_higher_score_then_the_better_seed() -> None:
    fmt = make("knockout", Settings(2, (2,), 1, seed=1, options={"order": [1, 0]}))  # entry 1 is seed 1
    assert isinstance(fmt, Knockout)
    split = [  # each wins once: 1 point each
        _finished(1, "k1m0g0", (0, 1), (1, 2), (30, 20)),
        _finished(1, "k1m0g0", (1, 0), (1, 2), (25, 20)),
    ]
    assert fmt.winner(0, 1, split) == 0  # 50 to 45 in-game points
    # the report says how (a newcomer read "search beat greedy" of a tie broken by score)
    assert fmt.report(History(tuple(split)), ["a", "b"])[0] == (
        "round 1: a beat b, level on points (0.5-0.5), on total score 50-45"
    )
    level = [
        _finished(1, "k1m0g0", (0, 1), (1, 2), (30, 20)),
        _finished(1, "k1m0g0", (1, 0), (1, 2), (30, 20)),
    ]
    assert fmt.winner(0, 1, level) == 1  # level on both: the better seed
    assert fmt.report(History(tuple(level)), ["a", "b"])[0] == (
        "round 1: b beat a, level on points and total score, as seed 1 against 2"
    )
    clear = [
        _finished(1, "k1m0g0", (0, 1), (1, 2), (30, 20)),
        _finished(1, "k1m0g0", (1, 0), (2, 1), (20, 30)),
    ]
    assert fmt.report(History(tuple(clear)), ["a", "b"])[0] == "round 1: a beat b, 1-0 in points"
    assert fmt.next(History(tuple(level))) == make("knockout", fmt.settings).next(History(tuple(level)))
    assert type(fmt.next(History(tuple(level)))).__name__ == "Finished"


def test_waits_for_the_round_and_hands_nothing_out_twice() -> None:
    fmt = make("knockout", Settings(4, (2,), 1, seed=2))
    first = fmt.next(History())
    assert isinstance(first, Play) and len(first.pairings) == 4 and not first.byes
    queued = tuple(
        Recorded(i, p.round, p.group, p.seed, p.seating, "running") for i, p in enumerate(first.pairings)
    )
    assert type(fmt.next(History(queued))).__name__ == "Wait"


@pytest.mark.parametrize(
    ("settings_", "message"),
    [
        (Settings(8, (4,)), "two-player tables"),
        (Settings(1, (2,)), "at least 2 bots"),
        (Settings(4, (2,), rounds=2), "--rounds is for Swiss"),
        (Settings(3, (2,), options={"order": [0, 0, 1]}), "each entry once"),
    ],
)
def test_bad_settings(settings_: Settings, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        make("knockout", settings_)
