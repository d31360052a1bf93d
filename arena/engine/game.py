"""Play a whole game with policies and the dice stream, producing its record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .chance import DiceStream
from .policies import Policy
from .record import RecordWriter
from .rules import apply, apply_throw
from .scoring import Outcome, outcome
from .state import State, new_game
from .variants import DEFAULT, Rules


@dataclass(frozen=True)
class PlayedGame:
    """A finished game: its final state, outcome and record text."""

    final: State
    outcome: Outcome
    record: str


def play_game(
    seed: int, policies: Sequence[Policy], *, record: bool = True, rules: Rules = DEFAULT
) -> PlayedGame:
    """Play one game to the end under ``rules``: seat k uses ``policies[k]``, throws come from the
    dice stream of ``seed`` (rules.md §5).  ``record=False`` skips building the record (for
    benchmarks)."""
    dice = DiceStream(seed)
    state = new_game(len(policies), rules)
    writer = RecordWriter(len(policies), seed, rules=rules) if record else None
    while not state.is_over:
        if state.is_chance:
            faces = dice.throw(state.turn, state.throw_no + 1, state.dice)
            if writer:
                writer.throw(faces)
            state = apply_throw(state, faces)
        else:
            action = policies[state.seat].choose(state)
            if writer:
                writer.decision(state, action)
            state = apply(state, action)
    if writer:
        writer.finish(state)
    return PlayedGame(state, outcome(state), writer.text() if writer else "")


def play_out(state: State, policies: Sequence[Policy], dice: DiceStream) -> State:
    """Play ``state`` on to the end of the game, seat k choosing with ``policies[k]`` and every
    throw drawn from ``dice`` (rules.md §5; no record): the final state."""
    while not state.is_over:
        if state.is_chance:
            state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
        else:
            state = apply(state, policies[state.seat].choose(state))
    return state
