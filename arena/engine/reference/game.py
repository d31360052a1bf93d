"""FROZEN REFERENCE of ``play_game``, record writing and scoring (``arena/engine/game.py``,
``record.py`` and ``scoring.py`` as of commit d3168dd), driving the reference rules.

Do not optimise or change this module: it lets the tests compare whole games (final state,
scores, record text) of the engine with the plain baseline.  The record text is built exactly as
:class:`arena.engine.record.RecordWriter` builds it, from the reference's legal actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..board import LOUNGER_VALUE, N_LOUNGERS
from ..notation import format_throw
from ..record import GAME, _dumps
from ..scoring import placings
from ..variants import DEFAULT, Rules
from .chance import DiceStream
from .policies import Policy
from .rules import apply, apply_throw, legal_actions
from .state import State, new_game


def scores(state: State) -> tuple[int, ...]:
    """R27: secured own loungers by value, 1 per figure on a foreign towel, 1 per 2 chips."""
    pts = [c // 2 for c in state.chips]
    towel, secured, figure = state.towel, state.secured, state.figure
    for i in range(N_LOUNGERS):
        if secured[i]:
            pts[towel[i]] += LOUNGER_VALUE[i]
        elif figure[i] >= 0:
            pts[figure[i]] += 1
    return tuple(pts)


@dataclass(frozen=True)
class PlayedGame:
    """A finished reference game: its final state, scores, placings and record text."""

    final: State
    scores: tuple[int, ...]
    placings: tuple[int, ...]
    record: str


def play_game(
    seed: int, policies: Sequence[Policy], *, record: bool = True, rules: Rules = DEFAULT
) -> PlayedGame:
    """Play one game to the end with the reference rules (see :func:`arena.engine.play_game`)."""
    dice = DiceStream(seed)
    state = new_game(len(policies), rules)
    header = {"game": GAME, "rules": rules.version, "players": len(policies), "seed": seed}
    lines: list[str] = [_dumps(header)]
    while not state.is_over:
        if state.is_chance:
            faces = dice.throw(state.turn, state.throw_no + 1, state.dice)
            if record:
                lines.append(_dumps({"throw": format_throw(faces)}))
            state = apply_throw(state, faces)
        else:
            action = policies[state.seat].choose(state)
            if record:
                legal = legal_actions(state)
                line: dict[str, Any] = {
                    "seat": state.seat,
                    "legal": [str(a) for a in legal],
                    "action": str(action),
                }
                if len(legal) == 1:
                    line["forced"] = True
                lines.append(_dumps(line))
            state = apply(state, action)
    pts = scores(state)
    assert state.termination is not None
    if record:
        lines.append(
            _dumps({"scores": list(pts), "placings": list(placings(pts)), "termination": state.termination})
        )
    return PlayedGame(state, pts, placings(pts), "\n".join(lines) + "\n" if record else "")
