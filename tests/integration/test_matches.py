"""Real matches between the sample bots: real processes, real gRPC over a Unix socket."""

from __future__ import annotations

import asyncio

import pytest

from arena.engine import replay, scores, stream_faces
from arena.engine.notation import parse_throw
from arena.matchrunner import play_local_match, resolve_bot
from arena.referee import MatchResult, TimeControl

from .helpers import PidRecorder, assert_reaped, competition_placings, replay_result, strip_ms

CONTROL = TimeControl(move_time=2.0, bank=10.0)  # generous: the machine is shared


def run_match(names: list[str], seed: int, *, match_id: str | None = None) -> tuple[MatchResult, set[int]]:
    recorder = PidRecorder()
    specs = [resolve_bot(n) for n in names]
    result = asyncio.run(play_local_match(specs, seed, CONTROL, match_id=match_id, on_event=recorder))
    assert len(recorder.pids) == len(names), f"expected {len(names)} bot processes, saw {recorder.pids}"
    assert_reaped(recorder.pids)
    return result, recorder.pids


@pytest.mark.parametrize(
    ("names", "seed"),
    [
        (["greedy", "random"], 11),
        (["random", "greedy", "greedy"], 12),
        (["greedy", "random", "greedy", "random"], 13),
    ],
    ids=["2p", "3p", "4p"],
)
def test_sample_bots_play_to_the_end(names: list[str], seed: int) -> None:
    result, _ = run_match(names, seed)
    n = len(names)

    assert result.players == n
    assert result.seed == seed
    assert result.termination in ("normal", "round-cap")
    assert result.forfeits == ()
    assert [s.seat for s in result.seats] == list(range(n))
    assert [s.name for s in result.seats] == names
    for seat in result.seats:
        assert seat.termination == result.termination
        assert seat.detail == ""
        assert seat.decisions > 0, f"seat {seat.seat} never decided"
        assert 0 < seat.think_max <= seat.think_total
    # placings are the standard competition ranking of the scores (R28)
    assert list(result.placings) == competition_placings(result.scores)
    assert min(result.placings) == 1

    rep = replay(result.replay)  # verifies every event, the dice stream included
    assert list(scores(rep.final)) == list(result.scores)
    assert rep.result["scores"] == list(result.scores)
    assert rep.result["termination"] == result.termination
    assert rep.header["players"] == n and rep.header["seed"] == seed
    assert rep.header["seating"] == names
    assert rep.final.is_over
    replay_result(result)

    # every decision the referee asked for is in the record, with its think time
    asked = [e for e in rep.events if "ms" in e]
    assert len(asked) == sum(s.decisions for s in result.seats)
    for k in range(n):
        assert any(e.get("seat") == k for e in asked)
    assert result.events == len(rep.events)


def test_replay_throws_are_the_dice_stream() -> None:
    result, _ = run_match(["greedy", "greedy"], 2024)
    rep = replay(result.replay)
    throws = 0
    for k, event in enumerate(rep.events):
        if "throw" not in event:
            continue
        before = rep.states[k]
        expected = sorted(stream_faces(2024, before.turn, before.throw_no + 1)[: before.dice])
        assert list(parse_throw(event["throw"])) == expected
        throws += 1
    assert throws > 10


@pytest.mark.parametrize(
    "names", [["greedy", "greedy", "greedy"], ["random", "greedy"]], ids=["greedy-3p", "random-greedy"]
)
def test_same_seed_same_replay(names: list[str]) -> None:
    # The random bot seeds itself from the match id and its seat: same id, same choices.
    first, pids1 = run_match(names, 777, match_id="det")
    second, pids2 = run_match(names, 777, match_id="det")
    assert pids1.isdisjoint(pids2)  # really two sets of processes
    assert first.scores == second.scores
    assert first.placings == second.placings
    a, b = strip_ms(first.replay), strip_ms(second.replay)
    assert len(a) == len(b) > 100
    assert a == b
    assert first.replay != second.replay  # the think times differ: they were really stripped
    # a different seed gives a different game
    other, _ = run_match(names, 778, match_id="det")
    assert strip_ms(other.replay) != a
