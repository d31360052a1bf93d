"""FROZEN REFERENCE COPY of ``arena/engine/rules.py`` as of commit d3168dd (before issue 20).

Do not optimise or change this module: it is the plain baseline that ``benchmarks/engine.py``
measures the engine against, and the independent oracle that ``tests/engine/test_fast_vs_reference.py``
checks the engine with (same legal actions, states, scores and records).  Original docstring:

The rules: legal actions and transitions (rules R8-R26).

Pure functions of immutable states.  ``legal_actions`` lists the decisions in a fixed order (a
"do nothing" first: STOP in the rolling phase, PASS in the action phase); ``apply`` checks an
action against that list and returns the next state; ``apply_throw`` applies a chance event.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Final

from .. import actions as A
from ..actions import Action, ActionKind, parse_action
from ..board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    CHIPS_PER_INVASION,
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
    advance,
)
from ..errors import IllegalActionError, IllegalThrowError
from ..notation import format_counts
from ..state import NO_DICE, Phase, Termination
from .state import State

_N_REGULAR: Final = len(REGULAR)


# --------------------------------------------------------------------------- legal actions


def legal_actions(state: State) -> tuple[Action, ...]:
    """Every legal decision of the seat to act, in a deterministic order.

    Empty at a chance node (use :func:`apply_throw`) and when the game is over.  The result is
    cached on the (immutable) state.
    """
    legal = state._legal
    if legal is None:
        phase = state.phase
        if phase == Phase.ROLL:
            legal = _roll_actions(state.last[:N_COLOURS], state.chips[state.seat] > 0)
        elif phase == Phase.ACTION:
            legal = _lounger_actions(state)
        elif phase == Phase.SETUP:
            towel = state.towel
            legal = tuple(A.PLACE[i] for i in REGULAR if towel[i] < 0)
        else:
            legal = ()
        state._legal = legal
    return legal


_ROLL_CACHE: dict[tuple[tuple[int, ...], bool], tuple[Action, ...]] = {}


def _roll_actions(colours: tuple[int, ...], can_chip: bool) -> tuple[Action, ...]:
    """R12, R13: STOP; CHIP with a chip; every KEEP of 1..k-1 of the k colour dice thrown."""
    key = (colours, can_chip)
    cached = _ROLL_CACHE.get(key)
    if cached is not None:
        return cached
    out = [A.STOP]
    if can_chip:
        out.append(A.CHIP)
    total = sum(colours)
    for keep in product(*(range(n + 1) for n in colours)):
        if 0 < sum(keep) < total:
            out.append(A.KEEP[keep])
    result = tuple(out)
    _ROLL_CACHE[key] = result
    return result


_REACH_CACHE: dict[tuple[tuple[int, ...], int], tuple[tuple[int, ...], bool]] = {}


def _reach(result: tuple[int, ...], guard: int) -> tuple[tuple[int, ...], bool]:
    """R16-R18: reachable regular loungers (ids, in order) and whether a five is within reach."""
    key = (result[:N_COLOURS], guard)
    hit = _REACH_CACHE.get(key)
    if hit is None:
        blocked = BLOCKED[guard + 1]
        regular = tuple(
            i for i in REGULAR if result[LOUNGER_COLOUR[i]] >= LOUNGER_VALUE[i] and i not in blocked
        )
        hit = (regular, max(result[:N_COLOURS]) >= FIVE_VALUE)
        _REACH_CACHE[key] = hit
    return hit


def reachable(state: State) -> tuple[int, ...]:
    """Lounger ids the current rolling result reaches (R17, R18), regardless of who owns them."""
    if state.phase != Phase.ACTION:
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


def apply(state: State, action: Action | str) -> State:
    """The state after the seat to act takes ``action`` (an :class:`Action` or its text).

    Raises :class:`InvalidActionError` for malformed text and :class:`IllegalActionError` for a
    well-formed action that is not legal now; ``state`` is never changed.
    """
    if isinstance(action, str):
        action = parse_action(action)
    if action not in legal_actions(state):
        raise IllegalActionError(str(action), state.phase.label, _actor(state), _why(state, action))
    s = state._copy()
    kind = action.kind
    if kind == ActionKind.KEEP:
        last = state.last
        keep = action.keep
        s.kept = tuple(
            [state.kept[c] + keep[c] for c in range(N_COLOURS)] + [state.kept[LIFEGUARD] + last[LIFEGUARD]]
        )
        s.dice = sum(last[:N_COLOURS]) - sum(keep)
        s.last = NO_DICE
        s.phase = Phase.THROW
    elif kind == ActionKind.STOP:
        result = tuple(k + t for k, t in zip(state.kept, state.last, strict=True))
        s.result = result
        s.guard = advance(state.guard, result[LIFEGUARD])  # R15
        s.phase = Phase.ACTION
    elif kind == ActionKind.CHIP:
        chips = list(state.chips)
        chips[state.seat] -= 1
        s.chips = tuple(chips)
        s.pool = state.pool + 1
        s.dice = sum(state.last)  # R12: every die of the last throw, lifeguards too
        s.last = NO_DICE
        s.phase = Phase.THROW
    elif kind == ActionKind.PLACE:
        _place(state, s, action.lounger)
    else:
        _use_lounger(state, s, kind, action.lounger)
        _end_turn(s)
    return s


def _place(state: State, s: State, lounger: int) -> None:
    """R8: a plain towel on an empty regular lounger; setup ends once all 24 carry one."""
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


def _use_lounger(state: State, s: State, kind: ActionKind, i: int) -> None:
    """R19-R23 (legality already checked)."""
    me = state.seat
    if kind == ActionKind.PASS:
        return
    secured = list(state.secured)
    if kind == ActionKind.FLIP:
        secured[i] = True
        s.occupied = state.occupied + 1
    elif kind == ActionKind.RECLAIM:
        figure = list(state.figure)
        figures = list(state.figures)
        figures[figure[i]] += 1
        figure[i] = -1
        secured[i] = True
        s.figure = tuple(figure)
        s.figures = tuple(figures)
    elif kind == ActionKind.INVADE:
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
    elif kind == ActionKind.CONQUER:
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
    elif kind == ActionKind.TAKE_FIVE:
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
    s.phase = Phase.THROW
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
            s.phase = Phase.OVER
            s.termination = Termination.NORMAL
            return
        if s.round >= rules.round_cap:
            s.phase = Phase.OVER
            s.termination = Termination.ROUND_CAP
            return
        s.round += 1
        nxt = 0
    s.seat = nxt
    _start_turn(s)


def apply_throw(state: State, faces: Sequence[int]) -> State:
    """The state after a throw showing ``faces`` (face ids 0..5, one per die thrown).

    Raises :class:`IllegalThrowError` when the state is not a chance node or the throw does not
    have exactly ``state.dice`` faces in range.
    """
    if state.phase != Phase.THROW:
        raise IllegalThrowError(f"no throw expected in phase {state.phase.label}")
    if len(faces) != state.dice:
        raise IllegalThrowError(f"expected a throw of {state.dice} dice, got {len(faces)}")
    counts = [0] * N_FACES
    try:
        for f in faces:
            if f < 0:
                raise IndexError(f)
            counts[f] += 1
    except (IndexError, TypeError):
        raise IllegalThrowError(f"faces must be integers 0..5, got {list(faces)!r}") from None
    s = state._copy()
    s.last = tuple(counts)
    s.throw_no = state.throw_no + 1
    s.phase = Phase.ROLL
    return s


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
