"""decision_values: every legal decision of the seat to act, valued; the contract in its docstring."""

from __future__ import annotations

from arena.engine import DiceStream, Phase, apply, apply_throw, legal_actions, new_game
from arena.engine.actions import PASS, STOP
from arena.strength.decisions import decision_values
from arena.strength.greedy import OnePlyGreedy


def _game_states(seed: int, players: int, limit: int = 400):
    s = new_game(players)
    dice = DiceStream(seed)
    g = OnePlyGreedy()
    while not s.is_over and limit:
        if s.is_chance:
            yield s
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
            continue
        yield s
        limit -= 1
        s = apply(s, g.choose(s))
    yield s


def test_keys_are_the_legal_actions_and_values_are_deterministic() -> None:
    seen = set()
    for s in _game_states(3, 2):
        values = decision_values(s)
        if s.phase in (Phase.THROW, Phase.OVER):
            assert values == {}
            continue
        assert list(values) == list(legal_actions(s)) or set(values) == set(legal_actions(s))
        assert decision_values(s) == values  # a fresh call repeats the values exactly
        seen.add(s.phase)
        if s.phase == Phase.ACTION:
            assert values[PASS] == 0.0  # relative to passing
    assert seen == {Phase.SETUP, Phase.ROLL, Phase.ACTION}


def test_rolling_values_dominate_stop_with_keeps_that_can_only_add() -> None:
    # the best rolling value is at least STOP's (stopping is always an option later, R12)
    for s in _game_states(11, 4):
        if s.phase == Phase.ROLL:
            values = decision_values(s)
            assert max(values.values()) >= values[STOP] - 1e-9
