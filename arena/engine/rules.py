"""The rules: legal actions and transitions (rules R8-R26).

Pure functions of immutable states.  ``legal_actions`` lists the decisions in a fixed order (a
"do nothing" first: STOP in the rolling phase, PASS in the action phase); ``apply`` checks an
action against that list and returns the next state; ``apply_throw`` applies a chance event.

How it is fast (issue 20; ``docs/engine-speed.md``).  The rolling phase, which is most of a
game's steps, runs on tables built once per distinct throw and shared by every game:

* ``_roll_entry(last)``: per last throw (6 per-face counts), the legal tuple without and with a
  chip, and a dict from each of those actions to its transition (the dice a KEEP sets aside
  including the lifeguards, and how many dice the next throw uses).  ``apply`` checks legality
  and finds the transition with one dict lookup instead of a scan of up to 48 actions;
* ``_THROWS``: per thrown faces (as ``bytes``), the per-face counts and their roll entry, so
  ``apply_throw`` counts nothing, and it hands the next state its legal actions at once;
* ``_REACH``: per lifeguard position and result, the reachable loungers (R16-R18).

The states stay immutable (the tables only hold shared tuples), the legal actions keep their
order, and every error is raised exactly as before: whatever the fast path does not recognise (an
action that is not legal, an unhashable one, faces that are not small ints) goes down the plain
path, which is the original code.  ``arena.engine.reference`` keeps the unoptimised engine;
``tests/engine/test_fast_vs_reference.py`` checks that both agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from itertools import product
from typing import Final

from . import actions as A
from .actions import Action, ActionKind, parse_action
from .board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    CHIPS_PER_INVASION,
    DIVING_BOARD,
    FIVE_VALUE,
    FIVES,
    LIFEGUARD,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    LOUNGERS,
    N_COLOURS,
    N_DICE,
    N_FACES,
    N_LOUNGERS,
    REGULAR,
    TOWELS_PER_PLAYER,
    TRACK_LEN,
)
from .chance import LAST_THROW
from .errors import IllegalActionError, IllegalThrowError
from .notation import format_counts
from .state import NO_DICE, Phase, State, Termination, clone

# Phases as plain ints for comparisons, and as members for assignment.
_SETUP_I: Final = int(Phase.SETUP)
_THROW_I: Final = int(Phase.THROW)
_ROLL_I: Final = int(Phase.ROLL)
_ACTION_I: Final = int(Phase.ACTION)
P_THROW: Final = Phase.THROW
P_ROLL: Final = Phase.ROLL
P_ACTION: Final = Phase.ACTION
P_OVER: Final = Phase.OVER
_FLIP: Final = int(ActionKind.FLIP)
_RECLAIM: Final = int(ActionKind.RECLAIM)
_INVADE: Final = int(ActionKind.INVADE)
_CONQUER: Final = int(ActionKind.CONQUER)
_TAKE_FIVE: Final = int(ActionKind.TAKE_FIVE)
_PASS: Final = int(ActionKind.PASS)
_PLACE: Final = int(ActionKind.PLACE)
_KEEP: Final = int(ActionKind.KEEP)
_STOP: Final = int(ActionKind.STOP)
_CHIP: Final = int(ActionKind.CHIP)

_N_REGULAR: Final = len(REGULAR)


# --------------------------------------------------------------------------- legal actions

# One step of the rolling phase: (kind: _STOP, _CHIP or _KEEP, the dice a KEEP sets aside per face
# with the thrown lifeguards, the dice the next throw uses after a KEEP).
_RollStep = tuple[int, tuple[int, ...], int]
# Per last throw: legal actions without a chip, with a chip, every one's step, and the throw's
# per-face counts (one shared tuple per distinct throw).
_RollEntry = tuple[tuple[Action, ...], tuple[Action, ...], dict[Action, _RollStep], tuple[int, ...]]
_ROLL_TABLE: dict[tuple[int, ...], _RollEntry] = {}
# id(legal tuple of a roll entry) -> its steps by id(action).  Sound because those tuples and the
# interned actions live as long as the table (forever): no other live object can have their ids.
_STEPS_OF_LEGAL: dict[int, dict[int, _RollStep]] = {}


def _roll_entry(last: tuple[int, ...]) -> _RollEntry:
    """The rolling-phase table of the last throw ``last`` (built once per distinct throw)."""
    entry = _ROLL_TABLE.get(last)
    if entry is None:
        # setdefault: if two threads build the same entry, both use (and register) the one that
        # stays in the table, so every id in _STEPS_OF_LEGAL belongs to a tuple that lives forever.
        entry = _ROLL_TABLE.setdefault(last, _build_roll_entry(last))
        by_id = {id(a): step for a, step in entry[2].items()}
        _STEPS_OF_LEGAL[id(entry[0])] = _STEPS_OF_LEGAL[id(entry[1])] = by_id
    return entry


def _build_roll_entry(last: tuple[int, ...]) -> _RollEntry:
    """R12, R13: STOP; CHIP with a chip; every KEEP of 1..k-1 of the k colour dice thrown."""
    colours = last[:N_COLOURS]
    total = sum(colours)
    keeps = [A.KEEP[keep] for keep in product(*(range(n + 1) for n in colours)) if 0 < sum(keep) < total]
    guards = last[LIFEGUARD]
    steps: dict[Action, _RollStep] = {A.STOP: (_STOP, NO_DICE, 0), A.CHIP: (_CHIP, NO_DICE, 0)}
    for a in keeps:
        steps[a] = (_KEEP, (*a.keep, guards), total - sum(a.keep))
    return (A.STOP, *keeps), (A.STOP, A.CHIP, *keeps), steps, tuple(last)


def legal_actions(state: State) -> tuple[Action, ...]:
    """Every legal decision of the seat to act, in a deterministic order.

    Empty at a chance node (use :func:`apply_throw`) and when the game is over.  The result is
    cached on the (immutable) state.
    """
    legal = state._legal
    if legal is None:
        phase = state.phase
        if phase == _ROLL_I:
            entry = _roll_entry(state.last)
            legal = entry[1] if state.chips[state.seat] > 0 else entry[0]
        elif phase == _ACTION_I:
            legal = _lounger_actions(state)
        elif phase == _SETUP_I:
            towel = state.towel
            legal = tuple([A.PLACE[i] for i in REGULAR if towel[i] < 0])
        else:
            legal = ()
        state._legal = legal
    return legal


# _REACH[guard + 1][result]: the reachable regular loungers (ids, in order), and whether a five is.
_REACH: Final[tuple[dict[tuple[int, ...], tuple[tuple[int, ...], bool]], ...]] = tuple(
    {} for _ in range(TRACK_LEN + 1)
)


def _reach(result: tuple[int, ...], guard: int) -> tuple[tuple[int, ...], bool]:
    """R16-R18: reachable regular loungers (ids, in order) and whether a five is within reach."""
    table = _REACH[guard + 1]
    hit = table.get(result)
    if hit is None:
        colours = result[:N_COLOURS]
        blocked = BLOCKED[guard + 1]
        regular = tuple(
            i for i in REGULAR if colours[LOUNGER_COLOUR[i]] >= LOUNGER_VALUE[i] and i not in blocked
        )
        hit = table[result] = (regular, max(colours) >= FIVE_VALUE)
    return hit


def reachable(state: State) -> tuple[int, ...]:
    """Lounger ids the current rolling result reaches (R17, R18), regardless of who owns them."""
    if state.phase != _ACTION_I:
        return ()
    regular, five = _reach(state.result, state.guard)
    if five:
        return regular + tuple(i for i in FIVES if state.towel[i] < 0)
    return regular


def _lounger_actions(state: State) -> tuple[Action, ...]:
    """R19-R24: PASS, then one action per usable reachable lounger, by lounger id."""
    me = state.seat
    regular, five = _reach(state.result, state.guard)
    towel = state.towel
    secured = state.secured
    figure = state.figure
    out = [A.PASS]
    has_figure = state.figures[me] > 0
    has_towel = state.towels[me] > 0
    for i in regular:
        if secured[i]:
            continue
        fig = figure[i]
        if towel[i] == me:
            out.append(A.FLIP[i] if fig < 0 else A.RECLAIM[i])
        elif fig < 0:
            if has_figure:
                out.append(A.INVADE[i])
        elif fig == me and has_towel:
            out.append(A.CONQUER[i])
    if five and has_towel:
        for i in FIVES:
            if towel[i] < 0:
                out.append(A.TAKE_FIVE[i])
    return tuple(out)


# --------------------------------------------------------------------------- transitions

_PLACE_AT: Final = {A.PLACE[i]: i for i in REGULAR}


def apply(state: State, action: Action | str) -> State:
    """The state after the seat to act takes ``action`` (an :class:`Action` or its text).

    Raises :class:`InvalidActionError` for malformed text and :class:`IllegalActionError` for a
    well-formed action that is not legal now; ``state`` is never changed.  An action equal to a
    legal one is applied as that (interned) legal action.
    """
    phase = state.phase
    if phase == _ROLL_I:
        by_id = _STEPS_OF_LEGAL.get(id(state._legal))
        step = None if by_id is None else by_id.get(id(action))  # the interned actions
        if step is None:
            if isinstance(action, str):
                action = parse_action(action)
            try:
                step = _roll_entry(state.last)[2].get(action)  # any action equal to one
            except TypeError:  # unhashable: equal to no legal action
                step = None
        if step is not None:
            code, aside, dice = step
            if code == _KEEP:  # R12 (inlined: the most frequent decision)
                s = clone(state)
                kept = state.kept
                if kept is NO_DICE:
                    s.kept = aside
                else:
                    s.kept = (
                        kept[0] + aside[0],
                        kept[1] + aside[1],
                        kept[2] + aside[2],
                        kept[3] + aside[3],
                        kept[4] + aside[4],
                        kept[5] + aside[5],
                    )
                s.dice = dice
                s.last = NO_DICE
                s.phase = P_THROW
                return s
            if code == _STOP:
                return _stop(state)
            if state.chips[state.seat] > 0:
                return _chip(state)
    else:
        if isinstance(action, str):
            action = parse_action(action)
        if phase == _ACTION_I:
            legal = legal_actions(state)
            if action in legal:
                return _act(state, legal[legal.index(action)])
        elif phase == _SETUP_I:
            try:
                i = _PLACE_AT.get(action)
            except TypeError:
                i = None
            if i is not None and state.towel[i] < 0:
                return _place(state, i)
    if isinstance(action, str):  # (already parsed on every path that gets here; for the type checker)
        action = parse_action(action)
    raise IllegalActionError(str(action), state.phase.label, _actor(state), _why(state, action))


def _stop(state: State) -> State:
    """R12, R15: STOP; the result is every die kept and thrown, the lifeguard walks."""
    s = clone(state)
    kept, last = state.kept, state.last
    if kept is NO_DICE:
        result = last
    else:
        result = (
            kept[0] + last[0],
            kept[1] + last[1],
            kept[2] + last[2],
            kept[3] + last[3],
            kept[4] + last[4],
            kept[5] + last[5],
        )
    s.result = result
    steps = result[LIFEGUARD]
    if steps > 0:  # R15, as board.advance
        guard = state.guard
        s.guard = (steps - 1) % TRACK_LEN if guard == DIVING_BOARD else (guard + steps) % TRACK_LEN
    s.phase = P_ACTION
    return s


def _chip(state: State) -> State:
    """R12: CHIP spends a chip; every die of the last throw, lifeguards too, is thrown again."""
    s = clone(state)
    chips = list(state.chips)
    chips[state.seat] -= 1
    s.chips = tuple(chips)
    s.pool = state.pool + 1
    s.dice = sum(state.last)
    s.last = NO_DICE
    s.phase = P_THROW
    return s


def _place(state: State, lounger: int) -> State:
    """R8: a plain towel on an empty regular lounger; setup ends once all 24 carry one."""
    s = clone(state)
    me = state.seat
    towel = list(state.towel)
    towel[lounger] = me
    s.towel = tuple(towel)
    towels = list(state.towels)
    towels[me] -= 1
    s.towels = tuple(towels)
    placed = state.players * TOWELS_PER_PLAYER - sum(towels)
    if placed == _N_REGULAR:  # R9: seat 0 takes the first game turn
        s.seat = 0
        s.round = 1
        _start_turn(s)
    else:
        s.seat = (me + 1) % state.players
    return s


def _act(state: State, action: Action) -> State:
    """R19-R23 (``action`` is a legal lounger action), then the end of the turn."""
    s = clone(state)
    kind = action.kind
    if kind != _PASS:
        _use_lounger(state, s, kind, action.lounger)
    _end_turn(s)
    return s


def _use_lounger(state: State, s: State, kind: int, i: int) -> None:
    """R19-R23 (legality already checked)."""
    me = state.seat
    secured = list(state.secured)
    if kind == _FLIP:
        secured[i] = True
        s.occupied = state.occupied + 1
    elif kind == _RECLAIM:
        figure = list(state.figure)
        figures = list(state.figures)
        figures[figure[i]] += 1
        figure[i] = -1
        secured[i] = True
        s.figure = tuple(figure)
        s.figures = tuple(figures)
    elif kind == _INVADE:
        figure = list(state.figure)
        figure[i] = me
        s.figure = tuple(figure)
        figures = list(state.figures)
        figures[me] -= 1
        s.figures = tuple(figures)
        gain = min(CHIPS_PER_INVASION, CHIPS_MAX_HELD - state.chips[me], state.pool)
        if gain > 0:
            chips = list(state.chips)
            chips[me] += gain
            s.chips = tuple(chips)
            s.pool = state.pool - gain
        s.occupied = state.occupied + 1
        return
    elif kind == _CONQUER:
        towel = list(state.towel)
        towels = list(state.towels)
        towels[towel[i]] += 1
        towels[me] -= 1
        towel[i] = me
        figure = list(state.figure)
        figure[i] = -1
        figures = list(state.figures)
        figures[me] += 1
        secured[i] = True
        s.towel = tuple(towel)
        s.towels = tuple(towels)
        s.figure = tuple(figure)
        s.figures = tuple(figures)
    elif kind == _TAKE_FIVE:
        towel = list(state.towel)
        towel[i] = me
        towels = list(state.towels)
        towels[me] -= 1
        secured[i] = True
        s.towel = tuple(towel)
        s.towels = tuple(towels)
        s.occupied = state.occupied + 1
    s.secured = tuple(secured)


def _start_turn(s: State) -> None:
    s.phase = P_THROW
    s.turn += 1
    s.throw_no = 0
    s.dice = N_DICE
    s.kept = NO_DICE
    s.last = NO_DICE
    s.result = NO_DICE


def _end_turn(s: State) -> None:
    """R25, R26: check the end condition, then pass to the next seat or end the game.

    The thresholds come from the game's rules (``s.rules``: standard or a variant)."""
    rules = s.rules
    if N_LOUNGERS - s.occupied <= rules.end_unoccupied:
        s.final_round = True
    nxt = s.seat + 1
    if nxt == s.players:
        if s.final_round:
            s.phase = P_OVER
            s.termination = Termination.NORMAL
            return
        if s.round >= rules.round_cap:
            s.phase = P_OVER
            s.termination = Termination.ROUND_CAP
            return
        s.round += 1
        nxt = 0
    s.seat = nxt
    _start_turn(s)


# Per thrown faces (``bytes(faces)``, in the order thrown): the roll entry of their counts.
_THROWS: dict[bytes, _RollEntry] = {}


def apply_throw(state: State, faces: Sequence[int]) -> State:
    """The state after a throw showing ``faces`` (face ids 0..5, one per die thrown).

    Raises :class:`IllegalThrowError` when the state is not a chance node or the throw does not
    have exactly ``state.dice`` faces in range.
    """
    if state.phase != _THROW_I:
        raise IllegalThrowError(f"no throw expected in phase {state.phase.label}")
    if len(faces) != state.dice:
        raise IllegalThrowError(f"expected a throw of {state.dice} dice, got {len(faces)}")
    last = LAST_THROW[0]
    try:
        hit = _THROWS.get(last[1] if faces is last[0] else bytes(faces))
    except (TypeError, ValueError):  # not small non-negative ints: counted (and refused) below
        hit = None
    if hit is None:
        hit = _count_throw(faces)
    s = clone(state)
    s.last = hit[3]
    s.throw_no = state.throw_no + 1
    s.phase = P_ROLL
    s._legal = hit[1] if state.chips[state.seat] > 0 else hit[0]
    return s


def _count_throw(faces: Sequence[int]) -> _RollEntry:
    """Count a throw's faces (IllegalThrowError unless they are 0..5) and remember the result."""
    counts = [0] * N_FACES
    try:
        for f in faces:
            if f < 0:
                raise IndexError(f)
            counts[f] += 1
    except (IndexError, TypeError):
        raise IllegalThrowError(f"faces must be integers 0..5, got {list(faces)!r}") from None
    hit = _roll_entry(tuple(counts))
    with suppress(TypeError, ValueError):  # faces that count but are no bytes are not remembered
        _THROWS[bytes(faces)] = hit
    return hit


def apply_throw_counts(state: State, counts: Sequence[int]) -> State:
    """:func:`apply_throw` for a throw given as per-face counts (6 ints)."""
    if len(counts) != N_FACES:
        raise IllegalThrowError(f"throw counts need {N_FACES} entries, got {len(counts)}")
    return apply_throw(state, tuple(f for f in range(N_FACES) for _ in range(counts[f])))


# --------------------------------------------------------------------------- explanations


def _actor(state: State) -> int | None:
    return None if state.phase in (Phase.THROW, Phase.OVER) else state.seat


def _why(state: State, action: Action) -> str:
    """A human explanation of why ``action`` is not legal in ``state`` (error path only)."""
    phase = state.phase
    kind = action.kind
    if phase == Phase.OVER:
        return "the game is over"
    if phase == Phase.THROW:
        return f"a throw of {state.dice} dice is due; no player decides now"
    expected = {
        Phase.SETUP: "place",
        Phase.ROLL: "stop, keep or chip",
        Phase.ACTION: "flip, reclaim, invade, conquer, take-five or pass",
    }[phase]
    allowed = {
        Phase.SETUP: {ActionKind.PLACE},
        Phase.ROLL: {ActionKind.STOP, ActionKind.KEEP, ActionKind.CHIP},
    }.get(
        phase,
        {
            ActionKind.FLIP,
            ActionKind.RECLAIM,
            ActionKind.INVADE,
            ActionKind.CONQUER,
            ActionKind.TAKE_FIVE,
            ActionKind.PASS,
        },
    )
    if kind not in allowed:
        return f"expected {expected} now"
    me = state.seat
    if phase == Phase.SETUP:
        lo = LOUNGERS[action.lounger]
        if lo.is_five:
            return "towels are placed on regular loungers only (R8)"
        return f"{lo.name} already carries a towel (R8)"
    if phase == Phase.ROLL:
        if kind == ActionKind.CHIP:
            return "no chip to spend (R12)"
        thrown = state.last[:N_COLOURS]
        if any(k > t for k, t in zip(action.keep, thrown, strict=True)):
            return f"the last throw ({format_counts(state.last)}) does not hold those dice (R12)"
        if sum(action.keep) >= sum(thrown):
            return "a KEEP must leave at least one colour die to throw; set all aside with STOP (R12)"
        return "not a legal KEEP (R12)"
    i = action.lounger
    lo = LOUNGERS[i]
    if i not in reachable(state):
        if lo.is_five and state.towel[i] >= 0:
            return f"{lo.name} is taken (R23)"
        return f"{lo.name} is not reachable with {format_counts(state.result)} (R16-R18, R15)"
    if state.secured[i]:
        return f"{lo.name} is secured; nothing can be done there (R24)"
    owner, fig = state.towel[i], state.figure[i]
    if kind == ActionKind.INVADE and state.figures[me] == 0:
        return "no figure left in supply (R21)"
    if kind in (ActionKind.CONQUER, ActionKind.TAKE_FIVE) and state.towels[me] == 0:
        return "no towel left in supply (R22, R23)"
    return (
        f"{lo.name} carries {'no towel' if owner < 0 else f'a towel of seat {owner}'}"
        f"{'' if fig < 0 else f' with a figure of seat {fig}'}; the action does not fit (R19-R24)"
    )
