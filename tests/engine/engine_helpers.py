"""Helpers for the engine tests: drive a game to a chosen position with public API only.

Positions are reached by playing setup placements, throws and actions through ``apply`` and
``apply_throw``; positions that are awkward to reach are edited through the public snapshot API
(``from_snapshot(to_snapshot(s) modified)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.engine import (
    FACES,
    LOUNGERS,
    Phase,
    State,
    apply,
    apply_throw,
    from_snapshot,
    legal_actions,
    new_game,
    reachable,
    to_snapshot,
)
from arena.engine.board import LOUNGER_BY_NAME

REGULAR_NAMES = tuple(lo.name for lo in LOUNGERS if not lo.is_five)
FIVE_NAMES = ("five-1", "five-2")
ALL_NAMES = REGULAR_NAMES + FIVE_NAMES
NO_GUARD_6 = "green purple yellow red blue green"  # six dice, no lifeguard (reaches the green 2s)


def lid(name: str) -> int:
    """The id of the lounger called ``name``."""
    return LOUNGER_BY_NAME[name].id


def faces(text: str) -> tuple[int, ...]:
    """Face ids of face names separated by spaces or commas, in the given order."""
    return tuple(FACES.index(n) for n in text.replace(",", " ").split())


def owners_for(players: int, fixed: Mapping[str, int] | None = None) -> dict[str, int]:
    """A complete setup: ``fixed`` owners first, the other loungers in id order to seats that
    still have room (24 / players towels each, R8).  Default: lounger k goes to seat k % players."""
    quota = 24 // players
    owners = dict(fixed or {})
    count = [0] * players
    for seat in owners.values():
        count[seat] += 1
    assert all(c <= quota for c in count), "too many fixed loungers for one seat"
    for k, name in enumerate(REGULAR_NAMES):
        if name in owners:
            continue
        seat = k % players
        while count[seat] >= quota:
            seat = (seat + 1) % players
        owners[name] = seat
        count[seat] += 1
    return owners


def setup(players: int, fixed: Mapping[str, int] | None = None) -> State:
    """Play the whole setup (R8) so that the towels end up as :func:`owners_for` says."""
    owners = owners_for(players, fixed)
    queues = {seat: [n for n in REGULAR_NAMES if owners[n] == seat] for seat in range(players)}
    s = new_game(players)
    while s.phase == Phase.SETUP:
        s = apply(s, f"place {queues[s.seat].pop(0)}")
    assert all(not q for q in queues.values())
    return s


def throw(state: State, text: str) -> State:
    """Apply a throw given as face names."""
    return apply_throw(state, faces(text))


def roll(state: State, text: str) -> State:
    """One throw, then STOP: the state in the action phase."""
    return apply(throw(state, text), "stop")


def turn(state: State, text: str, action: str) -> State:
    """A whole turn: one throw, STOP, then ``action``."""
    return apply(roll(state, text), action)


def edit(state: State, loungers: Mapping[str, Mapping[str, Any]] | None = None, **fields: Any) -> State:
    """``state`` with snapshot fields replaced (``chips=[3, 0]``, ``lifeguard="blue"``) and
    loungers changed (``{"green-4a": {"side": "guest"}}``)."""
    snap = to_snapshot(state)
    for key, value in fields.items():
        assert key in snap, key
        snap[key] = value
    for name, change in (loungers or {}).items():
        entry = next(lo for lo in snap["loungers"] if lo["name"] == name)
        for key, value in change.items():
            assert key in entry, key
            entry[key] = value
    return from_snapshot(snap)


def reach_names(state: State) -> set[str]:
    """Names of the loungers the current result reaches (R17, R18)."""
    return {LOUNGERS[i].name for i in reachable(state)}


def legal_texts(state: State) -> list[str]:
    """The legal actions as canonical text, in the engine's order."""
    return [str(a) for a in legal_actions(state)]


def count_occupied(state: State) -> int:
    """Loungers with a secured towel or a figure, counted from the raw fields (R25)."""
    return sum(1 for i in range(26) if state.secured[i] or state.figure[i] >= 0)


def name_owner(state: State) -> dict[str, int]:
    """Towel owner per lounger name (-1: no towel)."""
    return {lo.name: state.towel[lo.id] for lo in LOUNGERS}
