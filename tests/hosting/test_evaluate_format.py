"""``arena evaluate``'s schedule is a format (pulled by the runner): duplicate groups handed out
one at a time, stopped by the sequential test over the complete groups in seed order."""

from __future__ import annotations

from dataclasses import replace

from arena.evaluation import MIN_SEQUENTIAL_GROUPS, SprtConfig
from arena.tournament.formats import Finished, History, Play, Recorded, Settings, Wait
from arena.tournament.formats.sequential import SequentialDuplicate, sprt_options


def fmt(
    players: int = 2, games: int = 50, sprt: SprtConfig | None = None, ahead: int = 1
) -> SequentialDuplicate:
    options = {"sprt": sprt_options(sprt), "ahead": ahead}
    return SequentialDuplicate(
        Settings(entries=players, table_sizes=(players,), games=games, seed=10, options=options)
    )


def hand_out(f: SequentialDuplicate, matches: list[Recorded]) -> Play:
    answer = f.next(History(tuple(matches)))
    assert isinstance(answer, Play)
    for p in answer.pairings:
        matches.append(Recorded(len(matches), p.round, p.group, p.seed, p.seating, "queued"))
    return answer


def win_all(matches: list[Recorded]) -> None:
    """The candidate (entry 0) alone first in every match."""
    for i, m in enumerate(matches):
        if m.status != "finished":
            placings = tuple(1 if e == 0 else 2 for e in m.seating)
            matches[i] = replace(m, status="finished", placings=placings, scores=placings)


def test_a_group_is_one_seed_under_every_seating_and_groups_come_one_at_a_time() -> None:
    f = fmt(players=3, games=2)
    matches: list[Recorded] = []
    first = hand_out(f, matches)
    assert [p.seating for p in first.pairings] == [(0, 1, 2), (1, 0, 2), (1, 2, 0)]
    assert {p.seed for p in first.pairings} == {10}
    assert isinstance(f.next(History(tuple(matches))), Wait)  # three wait to be played (ahead 1)
    win_all(matches)
    second = hand_out(f, matches)
    assert {p.seed for p in second.pairings} == {11} and {p.round for p in second.pairings} == {1}
    win_all(matches)
    assert isinstance(f.next(History(tuple(matches))), Finished)  # games=2 groups, all out


def test_the_sequential_test_finishes_the_format_and_answers_are_deterministic() -> None:
    f = fmt(sprt=SprtConfig(0.0, 150.0, 0.05, 0.05))
    matches: list[Recorded] = []
    while not isinstance(answer := f.next(History(tuple(matches))), Finished):
        assert isinstance(answer, Play)
        assert f.next(History(tuple(matches))) == answer  # a pure function of the history
        hand_out(f, matches)
        win_all(matches)
    state = f.test(History(tuple(matches)))
    assert state is not None and state.decision == "H1"
    groups = len({m.round for m in matches})
    assert groups == MIN_SEQUENTIAL_GROUPS < 50  # stopped early, never before the minimum
    assert fmt(sprt=None).test(History(tuple(matches))) is None
