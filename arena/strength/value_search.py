"""Every legal decision's expected value under the learned evaluation: exact one-turn expectimax.

:func:`value_decisions` (and :class:`ValueDecisions`, which keeps one turn's search between the
decisions of that turn) answer, for a decision state, ``{action: value}``: the deciding seat's
expected final margin in points (:meth:`arena.strength.value.ValueFunction.evaluate`) if it takes
that action and then plays the rest of its turn as well as possible:

* **setup** (R8): the value of the state after the placement;
* **action phase** (R19-R23): the value of the state after the action (the next turn's start,
  or the end of the game, where the margin is exact);
* **rolling** (R10-R15): the exact expectimax over the rest of the turn -- every outcome of every
  throw with its exact probability (:func:`arena.strength.dice.throw_outcomes`), the best of
  STOP / CHIP / every KEEP after each -- whose leaves (STOP) are worth the best lounger action the
  result reaches, valued as above with the lifeguard where the result's lifeguard faces put him
  (R15) and the chips that are left.

So the values of one decision are comparable with each other (the same units, the same
evaluation), and the best action's value minus the chosen one's is what the choice cost, in
expected points of final margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from arena.engine import Action, ActionKind, Phase, State, apply, legal_actions
from arena.engine.actions import CHIP, KEEP, PASS, STOP
from arena.engine.board import (
    FIVE_VALUE,
    FIVES,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    N_DICE,
    REGULAR,
    advance,
)

from .dice import CHIPS_SHIFT, LG_SHIFT, dice_code, throw_outcomes
from .value import ValueFunction

_KINDS: Final = (ActionKind.FLIP, ActionKind.RECLAIM, ActionKind.INVADE, ActionKind.CONQUER)
NEG: Final = -1e18


def after_action(state: State, action: Action, lifeguards: int, chips: int) -> State | None:
    """The state after the seat to act of ``state`` (a rolling decision: the lifeguard has not
    moved yet this turn) ends its rolling with ``lifeguards`` lifeguard faces and ``chips`` chips
    left and takes ``action``; None when no result can make ``action`` legal there (the
    lifeguard then blocks the lounger, R15, or the supply lacks a towel or a figure)."""
    me = state.seat
    s = state._copy()
    s.phase = Phase.ACTION
    s.guard = advance(state.guard, lifeguards)
    held = list(state.chips)
    s.pool = state.pool + held[me] - chips
    held[me] = chips
    s.chips = tuple(held)
    counts = [0] * 6
    if action.kind == ActionKind.TAKE_FIVE:
        counts[0] = FIVE_VALUE
    elif action.kind != ActionKind.PASS:
        counts[LOUNGER_COLOUR[action.lounger]] = LOUNGER_VALUE[action.lounger]
    counts[5] = lifeguards
    s.result = tuple(counts)
    if action not in legal_actions(s):
        return None
    return apply(s, action)


class TurnSearch:
    """The expectimax of one turn's rolling (module docstring), memoised for the turn.

    ``leaf_table[chips][lifeguards]`` is ``(pass value, best[colour][n])``: the value of PASS and,
    per colour, of the best action ``n`` dice of that colour reach (five-loungers included)."""

    def __init__(self, state: State, value: ValueFunction) -> None:
        me = state.seat
        self.chips_now = state.chips[me]
        candidates: list[Action] = [PASS]
        towels = state.towels[me]
        for i in REGULAR:
            if not state.secured[i]:
                candidates += [Action(k, i) for k in _KINDS]
        if towels and any(state.towel[i] < 0 for i in FIVES):
            candidates += [Action(ActionKind.TAKE_FIVE, i) for i in FIVES if state.towel[i] < 0]
        keys: list[tuple[int, int, Action]] = []
        afters: list[State] = []
        for chips in range(self.chips_now + 1):
            for lg in range(N_DICE + 1):
                for a in candidates:
                    after = after_action(state, a, lg, chips)
                    if after is not None:
                        keys.append((chips, lg, a))
                        afters.append(after)
        values = value.values_after(afters, me)
        table: list[list[tuple[float, list[list[float]]]]] = [
            [(NEG, [[NEG] * (N_DICE + 2) for _ in range(N_COLOURS)]) for _ in range(N_DICE + 1)]
            for _ in range(self.chips_now + 1)
        ]
        for (chips, lg, a), v in zip(keys, values, strict=True):
            best = table[chips][lg][1]
            x = float(v)
            if a.kind == ActionKind.PASS:
                table[chips][lg] = (x, best)
            elif a.kind == ActionKind.TAKE_FIVE:
                for c in range(N_COLOURS):
                    best[c][FIVE_VALUE] = max(best[c][FIVE_VALUE], x)
            else:
                c, need = LOUNGER_COLOUR[a.lounger], LOUNGER_VALUE[a.lounger]
                best[c][need] = max(best[c][need], x)
        for row in table:
            for _pv, best in row:
                for c in range(N_COLOURS):
                    for n in range(1, N_DICE + 2):
                        best[c][n] = max(best[c][n], best[c][n - 1])
        self.table = table
        self._leaf: dict[int, float] = {}
        self._chance: dict[int, float] = {}

    def leaf(self, code: int, chips: int) -> float:
        """The value of stopping with the result ``code`` and ``chips`` chips left."""
        key = code | chips << CHIPS_SHIFT
        v = self._leaf.get(key)
        if v is None:
            pass_value, best = self.table[chips][code >> LG_SHIFT & 7]
            v = pass_value
            for c in range(N_COLOURS):
                x = best[c][code >> (3 * c) & 7]
                if x > v:
                    v = x
            self._leaf[key] = v
        return v

    def chance(self, kept: int, k: int, chips: int) -> float:
        """Expected value of throwing ``k`` dice with ``kept`` set aside and ``chips`` chips."""
        memo = self._chance
        key = kept | chips << CHIPS_SHIFT
        v = memo.get(key)
        if v is not None:
            return v
        chip_alt = self.chance(kept, k, chips - 1) if chips > 0 else NEG
        ckey = chips << CHIPS_SHIFT
        leaves = self._leaf
        leaf = self.leaf
        total = 0.0
        for code, lifeguards, p, keeps in throw_outcomes(k):
            best = leaves.get(kept + code | ckey)
            if best is None:
                best = leaf(kept + code, chips)
            if chip_alt > best:
                best = chip_alt
            base = kept + lifeguards
            for s, left in keeps:
                x = memo.get(base + s | ckey)
                if x is None:
                    x = self.chance(base + s, left, chips)
                if x > best:
                    best = x
            total += p * best
        memo[key] = total
        return total

    def decide(self, kept: Sequence[int], last: Sequence[int], chips: int) -> dict[Action, float]:
        """Every legal rolling choice after the throw ``last`` with its expectimax value."""
        kc = dice_code(kept)
        out = {STOP: self.leaf(kc + dice_code(last), chips)}
        if chips > 0:
            out[CHIP] = self.chance(kc, sum(last), chips - 1)
        colours = tuple(last[:N_COLOURS])
        n_colour = sum(colours)
        base = kc + (last[5] << LG_SHIFT)
        for keep, action in KEEP.items():
            n = sum(keep)
            if 0 < n < n_colour and all(x <= y for x, y in zip(keep, colours, strict=True)):
                out[action] = self.chance(base + dice_code(keep), n_colour - n, chips)
        return out


class ValueDecisions:
    """``decision_values(state) -> {action: value}`` with the learned evaluation (module
    docstring); keeps the current turn's search, so the decisions of one turn share its memo."""

    def __init__(self, value: ValueFunction) -> None:
        self.value = value
        self._key: tuple[object, ...] | None = None
        self._search: TurnSearch | None = None

    def turn_search(self, state: State) -> TurnSearch:
        """The search of the turn ``state`` is in (built at the turn's first rolling decision)."""
        me = state.seat
        others = tuple(c for seat, c in enumerate(state.chips) if seat != me)
        # a CHIP spent earlier in the turn moves a chip from the seat to the pool: the same search
        key = (state.players, state.turn, me, state.guard, state.towel, state.secured, state.figure, others,
               state.chips[me] + state.pool)  # fmt: skip
        if self._search is None or key != self._key or self._search.chips_now < state.chips[me]:
            self._search = TurnSearch(state, self.value)
            self._key = key
        return self._search

    def __call__(self, state: State) -> dict[Action, float]:
        """Every legal action of the seat to act with its value (empty when nobody decides)."""
        legal = legal_actions(state)
        if not legal:
            return {}
        if state.phase == Phase.ROLL:
            search = self.turn_search(state)
            values = search.decide(state.kept, state.last, state.chips[state.seat])
            return {a: values[a] for a in legal}
        after = [apply(state, a) for a in legal]
        vals = self.value.values_after(after, state.seat)
        return {a: float(v) for a, v in zip(legal, vals, strict=True)}


def value_decisions(state: State, value: ValueFunction | None = None) -> dict[Action, float]:
    """Every legal action of ``state``'s seat to act with its expected final margin (module
    docstring); ``value`` defaults to the shipped weights."""
    from .value import load_default

    return ValueDecisions(value or load_default())(state)
