"""The lobby's schedule is a format: one remote bot's matches, one at a time, in seat-rotation
sets, every game with dice of its own (a remote bot remembers the dice of its earlier games)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arena.tournament.formats import Finished, FormatError, History, Play, Recorded, Settings, Wait
from arena.tournament.formats.lobby import RemoteStream
from arena.tournament.pairing import derive_seed, rotations


def stream(players: int = 3, games: int = 6, endless: bool = False) -> RemoteStream:
    options = {"stream": 42, "endless": endless}
    return RemoteStream(
        Settings(entries=players, table_sizes=(players,), games=games, seed=9, options=options)
    )


def play_through(s: RemoteStream, limit: int) -> list[Recorded]:
    matches: list[Recorded] = []
    while len(matches) < limit and isinstance(answer := s.next(History(tuple(matches))), Play):
        (p,) = answer.pairings
        matches.append(Recorded(len(matches), p.round, p.group, p.seed, p.seating, "running"))
        assert isinstance(s.next(History(tuple(matches))), Wait)  # one match at a time
        matches[-1] = replace(matches[-1], status="finished", placings=(1, 2, 3), scores=(3, 2, 1))
    return matches


def test_rotation_sets_one_match_at_a_time_then_finished() -> None:
    s = stream()
    matches = play_through(s, 100)
    assert len(matches) == 6 and isinstance(s.next(History(tuple(matches))), Finished)
    table = (0, 1, 2)
    for n, m in enumerate(matches):  # the lobby's scheme: set n // 3, rotation n % 3
        assert m.seating == rotations(table)[n % 3]
        assert m.group == f"g{n // 3}"
        assert m.seed == derive_seed(9, 42, n // 3, n % 3)


def test_no_two_games_of_a_remote_bot_share_their_dice() -> None:
    """A remote bot sees every throw of its games (the events in its requests) and remembers
    them: a later seat rotation on the same seed would be played with dice known in advance."""
    for players in (2, 3, 4):
        matches = play_through(stream(players=players, games=1, endless=True), 40)
        assert len({m.seed for m in matches}) == 40
    other = play_through(RemoteStream(Settings(entries=3, table_sizes=(3,), games=6, seed=9,
                                               options={"stream": 43})), 6)  # fmt: skip
    assert not {m.seed for m in other} & {m.seed for m in play_through(stream(), 6)}


def test_endless_keeps_going_and_bad_tables_are_refused() -> None:
    assert len(play_through(stream(games=1, endless=True), 20)) == 20
    with pytest.raises(FormatError):
        RemoteStream(Settings(entries=5, table_sizes=(5,)))
