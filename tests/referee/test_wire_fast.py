"""The per-decision path's fast forms (issue 20) keep the wire exactly as it was: the SDK's
state_from_pb rebuilds every engine state field for field and refuses bad messages with
WireError; memoised action texts and event messages equal the plain conversions."""

from __future__ import annotations

import random

import pytest

from arena.engine import DiceStream, apply, apply_throw, legal_actions, new_game
from arena.engine.state import State
from arena.referee.channel import ActionEvent, ThrowEvent
from arena.referee.grpc_channel import event_to_pb
from arena.referee.match import action_text
from arena.v1 import arena_pb2 as pb
from arena.wire import WireError, state_from_pb, state_to_pb

FIELDS = [f for f in State.__slots__ if f not in ("_legal", "termination")]


def _states(seeds: int) -> list[State]:
    out = []
    for seed in range(seeds):
        for players in (2, 3, 4):
            s, dice, rng = new_game(players), DiceStream(seed), random.Random(seed)
            while True:
                out.append(s)
                if s.is_over:
                    break
                if s.is_chance:
                    s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
                else:
                    s = apply(s, rng.choice(legal_actions(s)))
    return out


def test_state_round_trips_field_for_field() -> None:
    for s in _states(6):
        back = state_from_pb(pb.GameState.FromString(state_to_pb(s).SerializeToString()), s.rules)
        for name in FIELDS:
            assert getattr(back, name) == getattr(s, name), name
        assert legal_actions(back) == legal_actions(s)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: setattr(m, "players", 5), "players must be 2..4, got 5"),
        (lambda m: m.towel.append(1), "towel, secured and figure need 26 entries each"),
        (lambda m: m.chips.append(1), "one entry per player"),
        (lambda m: m.kept.append(1), "kept, last_throw and result need 6 counts each"),
        (lambda m: setattr(m, "phase", 99), "unknown phase 99"),
        (lambda m: setattr(m, "lifeguard", "deep-end"), "unknown track field 'deep-end'"),
    ],
)
def test_bad_messages_are_refused(change: object, message: str) -> None:
    msg = state_to_pb(new_game(4))
    change(msg)  # type: ignore[operator]
    with pytest.raises(WireError, match=message):
        state_from_pb(msg)


def test_memoised_texts_and_events_equal_the_plain_ones() -> None:
    for s in _states(2):
        if not s.is_over and not s.is_chance:
            for a in legal_actions(s):
                assert action_text(a) == str(a)
    event = ActionEvent(1, "stop", forced=True)
    assert event_to_pb(event) == pb.Event(action=pb.SeatAction(seat=1, action="stop", forced=True))
    assert event_to_pb(ActionEvent(1, "stop", forced=True)) is event_to_pb(event)
    assert event_to_pb(ThrowEvent("throw green")) == pb.Event(throw="throw green")
