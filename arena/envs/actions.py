"""Stable action indices: every action of the notation (rules.md §6.3) has one fixed index.

The action space of the environments is ``Discrete(N_ACTIONS)`` (376 indices):

=========  ===========================================================================
indices    actions
=========  ===========================================================================
0-23       ``place <lounger>`` for the 24 regular loungers, by lounger id
24         ``stop``
25         ``chip``
26-276     the 251 ``keep`` actions, by their per-colour counts in lexicographic order
           (green first): ``keep blue=1`` ... ``keep green=5``
277        ``pass``
278-373    per regular lounger id (0-23), four indices: ``flip``, ``reclaim``, ``invade``,
           ``conquer`` (index ``278 + 4 * id + k``)
374, 375   ``take-five five-1``, ``take-five five-2``
=========  ===========================================================================

Within every phase, increasing index order is the engine's order of legal actions (§6.3), so
the lowest legal index is always the "do nothing" (``stop``, ``pass``, the lowest free lounger
in setup).  The table in ``docs/envs.md`` is generated from :data:`ACTIONS` (a test checks it).

Chance outcomes: a throw of ``k`` dice is one of the multisets of faces, numbered by its position
in :func:`throw_outcomes` (per-face counts in lexicographic order, green first); OpenSpiel's
chance actions use these numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import cache
from typing import Final

from arena.engine import LOUNGERS, Action, ActionKind, State, legal_actions, parse_action
from arena.engine import actions as engine_actions
from arena.engine.board import N_DICE, N_FACES, REGULAR
from arena.engine.chance import throw_distribution


class IllegalIndexError(ValueError):
    """An action index that is not legal now (or not an action index at all).

    ``index`` is what was given, ``action`` its notation (``None`` when it names no action),
    ``legal`` the legal indices and their notation."""

    def __init__(self, index: object, state: State, reason: str = "") -> None:
        self.index = index
        self.action = describe(index)
        self.legal = legal_with_text(state)
        shown = ", ".join(f"{i} {text!r}" for i, text in self.legal[:40])
        if len(self.legal) > 40:
            shown += f", ... ({len(self.legal)} in all)"
        what = f"action index {index!r}" + (f" ({self.action!r})" if self.action else "")
        why = reason or f"not legal for seat {state.seat} in phase {state.phase.label}"
        super().__init__(f"{what} is {why}; the legal ones: {shown or 'none (nobody decides now)'}")


def _catalogue() -> tuple[Action, ...]:
    out: list[Action] = [engine_actions.PLACE[i] for i in REGULAR]
    out += [engine_actions.STOP, engine_actions.CHIP]
    out += [engine_actions.KEEP[k] for k in sorted(engine_actions.KEEP)]
    out.append(engine_actions.PASS)
    for i in REGULAR:
        out += [
            engine_actions.FLIP[i],
            engine_actions.RECLAIM[i],
            engine_actions.INVADE[i],
            engine_actions.CONQUER[i],
        ]
    out += [engine_actions.TAKE_FIVE[lo.id] for lo in LOUNGERS if lo.is_five]
    return tuple(out)


#: Every action by index.
ACTIONS: Final = _catalogue()
N_ACTIONS: Final = len(ACTIONS)
#: The index of every action.
INDEX: Final[dict[Action, int]] = {a: i for i, a in enumerate(ACTIONS)}
TEXTS: Final = tuple(str(a) for a in ACTIONS)

PLACE_BASE: Final = 0
STOP_INDEX: Final = INDEX[engine_actions.STOP]
CHIP_INDEX: Final = INDEX[engine_actions.CHIP]
KEEP_BASE: Final = CHIP_INDEX + 1
PASS_INDEX: Final = INDEX[engine_actions.PASS]
LOUNGER_BASE: Final = PASS_INDEX + 1
LOUNGER_KINDS: Final = (ActionKind.FLIP, ActionKind.RECLAIM, ActionKind.INVADE, ActionKind.CONQUER)
FIVE_BASE: Final = LOUNGER_BASE + len(LOUNGER_KINDS) * len(REGULAR)


def action_of(index: int) -> Action:
    """The engine action with index ``index``; :class:`IndexError` outside ``0..N_ACTIONS-1``."""
    if not 0 <= index < N_ACTIONS:
        raise IndexError(f"action index {index} is outside 0..{N_ACTIONS - 1}")
    return ACTIONS[index]


def index_of(action: Action | str) -> int:
    """The index of an action (an :class:`Action` or its notation)."""
    if isinstance(action, str):
        action = parse_action(action)
    try:
        return INDEX[action]
    except KeyError:
        raise ValueError(f"{action} can never be legal, so it has no index") from None


def describe(index: object) -> str | None:
    """The notation of ``index`` when it is an action index, else ``None``."""
    i = as_index(index)
    return TEXTS[i] if i is not None and 0 <= i < N_ACTIONS else None


def as_index(value: object) -> int | None:
    """``value`` as a Python int when it is an integer (numpy integers and 0-d arrays too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a core dependency
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        return int(value)
    return None


def legal_indices(state: State) -> list[int]:
    """The indices of the legal actions of ``state``, increasing (the engine's order)."""
    index = INDEX
    return [index[a] for a in legal_actions(state)]


def legal_with_text(state: State) -> list[tuple[int, str]]:
    """(index, notation) of every legal action of ``state``."""
    return [(i, TEXTS[i]) for i in legal_indices(state)]


def check_index(state: State, value: object) -> Action:
    """The legal action that ``value`` names, or :class:`IllegalIndexError` saying why not."""
    if type(value) is int and 0 <= value < N_ACTIONS:  # the fast path of every step
        action = ACTIONS[value]
        if action in legal_actions(state):
            return action
    i = as_index(value)
    if i is None:
        raise IllegalIndexError(value, state, "not an integer action index")
    if not 0 <= i < N_ACTIONS:
        raise IllegalIndexError(value, state, f"outside the action space 0..{N_ACTIONS - 1}")
    action = ACTIONS[i]
    if action not in legal_actions(state):
        raise IllegalIndexError(i, state)
    return action


# ------------------------------------------------------------------------------ chance outcomes


@cache
def throw_outcomes(k: int) -> tuple[tuple[int, ...], ...]:
    """The multisets a throw of ``k`` dice can show, as per-face counts, in lexicographic order."""
    return tuple(sorted(c for c, _ in throw_distribution(k)))


@cache
def _outcome_number(k: int) -> dict[tuple[int, ...], int]:
    return {c: n for n, c in enumerate(throw_outcomes(k))}


@cache
def throw_probabilities(k: int) -> tuple[Fraction, ...]:
    """The exact probability of every outcome of :func:`throw_outcomes` (``k``), same order."""
    prob = dict(throw_distribution(k))
    return tuple(prob[c] for c in throw_outcomes(k))


#: The most outcomes a throw can have (6 dice: 462 multisets of 6 faces).
MAX_THROW_OUTCOMES: Final = len(throw_outcomes(N_DICE))


def outcome_number(faces: Iterable[int]) -> int:
    """The outcome number of a throw given by its faces (any order)."""
    counts = [0] * N_FACES
    for f in faces:
        counts[f] += 1
    return _outcome_number(sum(counts))[tuple(counts)]


def outcome_counts(k: int, number: int) -> tuple[int, ...]:
    """The per-face counts of outcome ``number`` of a throw of ``k`` dice."""
    return throw_outcomes(k)[number]


def faces_of_counts(counts: Sequence[int]) -> tuple[int, ...]:
    """Face ids of per-face counts, in face order."""
    return tuple(f for f in range(N_FACES) for _ in range(counts[f]))


def markdown_table() -> str:
    """The action index table of ``docs/envs.md`` (ranges of indices with what they mean)."""
    rows = ["| index | action |", "|---:|---|"]
    rows += [f"| {i} | `{text}` |" for i, text in enumerate(TEXTS)]
    return "\n".join(rows)
