#!/usr/bin/env python3
"""A search bot: exact expectimax over the rolling, potential-based lounger values.

(work in progress)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import product

from arena.engine import Action, ActionKind, GreedyPolicy, Phase, State, legal_actions, throw_distribution_float
from arena.engine.board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    CHIPS_PER_INVASION,
    FIVES,
    LIFEGUARD,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    N_LOUNGERS,
    REGULAR,
    advance,
)
from arena.sdk import Bot, run

# ----------------------------------------------------------------------------- dice codes
# A multiset of dice is one int: 3 bits per face (counts 0..6), face f at bits 3f..3f+2, so
# adding two codes adds the multisets.  The lifeguard (face 5) sits at bits 15..17.
_LG = 15
_CHIP_SHIFT = 18


def dice_code(counts: Sequence[int]) -> int:
    """The int code of per-face counts."""
    return sum(c << (3 * f) for f, c in enumerate(counts))


Outcome = tuple[int, int, float, tuple[tuple[int, int], ...]]


@cache
def throw_outcomes(k: int) -> tuple[Outcome, ...]:
    """Every outcome of a throw of ``k`` dice: (code, lifeguard code, probability, keeps), where
    keeps lists (code of the kept colour dice, dice left to throw) for every legal KEEP (R12)."""
    out = []
    for counts, p in throw_distribution_float(k):
        colours = counts[:N_COLOURS]
        cd = sum(colours)
        keeps = tuple(
            (dice_code(s), k - counts[LIFEGUARD] - sum(s))
            for s in product(*(range(n + 1) for n in colours))
            if 0 < sum(s) < cd
        )
        out.append((dice_code(counts), counts[LIFEGUARD] << _LG, p, keeps))
    return tuple(out)


class TurnPlanner:
    """Exact expectimax over one turn's rolling decisions (R10-R15).

    ``table[chips][lifeguards][colour][n]`` is the value of the best lounger action reachable with
    ``n`` dice of ``colour`` when the turn's result holds ``lifeguards`` lifeguard faces (which
    fixes where the lifeguard ends, R15) and the player is left with ``chips`` chips; the value of
    a result is the best over colours (one action per turn), never below PASS (0), plus
    ``chip_value[chips]``.  Chance nodes (the state just before a throw) are memoised by (kept
    dice, chips left); the number of dice to throw follows from the kept dice.
    """

    def __init__(self, table: list[list[list[list[float]]]], chip_value: Sequence[float]) -> None:
        self.table = table
        self.chip_value = chip_value
        self._leaf: dict[int, float] = {}
        self._chance: dict[int, float] = {}

    def leaf(self, code: int, chips: int) -> float:
        """The value of stopping with the result ``code`` and ``chips`` chips left."""
        key = code | chips << _CHIP_SHIFT
        v = self._leaf.get(key)
        if v is None:
            row = self.table[chips][code >> _LG & 7]
            best = 0.0
            for c in range(N_COLOURS):
                x = row[c][code >> (3 * c) & 7]
                if x > best:
                    best = x
            v = best + self.chip_value[chips]
            self._leaf[key] = v
        return v

    def chance(self, kept: int, k: int, chips: int) -> float:
        """Expected value of throwing ``k`` dice with ``kept`` set aside and ``chips`` chips."""
        memo = self._chance
        v = memo.get(kept | chips << _CHIP_SHIFT)
        if v is not None:
            return v
        chip_alt = self.chance(kept, k, chips - 1) if chips > 0 else -1e9
        leaf = self.leaf
        ckey = chips << _CHIP_SHIFT
        total = 0.0
        for code, lcode, p, keeps in throw_outcomes(k):
            best = leaf(kept + code, chips)
            if chip_alt > best:
                best = chip_alt
            base = kept + lcode
            for s, left in keeps:
                child = base + s
                x = memo.get(child | ckey)
                if x is None:
                    x = self.chance(child, left, chips)
                if x > best:
                    best = x
            total += p * best
        memo[kept | ckey] = total
        return total

    def decide(self, kept: Sequence[int], last: Sequence[int], chips: int) -> list[tuple[float, Action]]:
        """Every rolling choice after the throw ``last`` with its expectimax value."""
        from arena.engine.actions import CHIP, KEEP, STOP

        kc = dice_code(kept)
        lc = dice_code(last)
        k = sum(last)
        out = [(self.leaf(kc + lc, chips), STOP)]
        if chips > 0:
            out.append((self.chance(kc, k, chips - 1), CHIP))
        colours = tuple(last[:N_COLOURS])
        cd = sum(colours)
        base = kc + (last[LIFEGUARD] << _LG)
        for s in product(*(range(n + 1) for n in colours)):
            n = sum(s)
            if 0 < n < cd:
                out.append((self.chance(base + dice_code(s), cd - n, chips), KEEP[s]))
        return out


# ----------------------------------------------------------------------------- evaluation


@dataclass
class Params:
    """Weights of the potential model (see the module docstring)."""

    lam: tuple[float, float, float, float, float, float] = (0, 0, 0.55, 0.45, 0.35, 0)  # by value
    rho: tuple[float, float, float, float, float, float] = (0, 0, 0.3, 0.25, 0.2, 0)
    chip: float = 0.65
    five_pot: float = 0.0
    setup: tuple[float, float, float, float, float] | None = None  # placement weight by value
    colour_bonus: float = 0.0


class Evaluator:
    """Action values for the seat to act: the change of (own value - mean opponent value)."""

    def __init__(self, state: State, params: Params) -> None:
        self.state = state
        self.p = params
        me = self.me = state.seat
        self.opp_w = 1.0 / (state.players - 1)
        lam, rho = params.lam, params.rho
        towel, secured, figure = state.towel, state.secured, state.figure
        has_fig = state.figures[me] > 0
        has_towel = state.towels[me] > 0
        w = self.opp_w
        # per lounger: (value of the action the actor can take there, is it an INVADE) or None
        acts: list[tuple[float, bool, ActionKind] | None] = [None] * N_LOUNGERS
        for i in REGULAR:
            if secured[i]:
                continue
            v = LOUNGER_VALUE[i]
            o, f = towel[i], figure[i]
            if o == me:
                if f < 0:
                    acts[i] = (v - lam[v] * v, False, ActionKind.FLIP)
                else:
                    acts[i] = (v - rho[v] * v + (1 + rho[v] * (v - 2)) * w, False, ActionKind.RECLAIM)
            elif f < 0:
                if has_fig:
                    acts[i] = (1 + rho[v] * (v - 2) + (lam[v] - rho[v]) * v * w, True, ActionKind.INVADE)
            elif f == me and has_towel:
                acts[i] = (v - 1 - rho[v] * (v - 2) + rho[v] * v * w, False, ActionKind.CONQUER)
        self.acts = acts
        self.five = 5.0 - params.five_pot * (1 - w) if has_towel and any(towel[i] < 0 for i in FIVES) else None

    def invade_gain(self, chips: int, total: int) -> int:
        """Chips an INVADE brings with ``chips`` held and ``total`` = held + pool (R21)."""
        return max(0, min(CHIPS_PER_INVASION, CHIPS_MAX_HELD - chips, total - chips))

    def chip_value(self, chips: int) -> float:
        return self.p.chip * chips

    def action_value(self, action: Action, chips: int, total: int) -> float:
        """The value of a lounger action (PASS = 0)."""
        kind = action.kind
        if kind == ActionKind.PASS:
            return 0.0
        if kind == ActionKind.TAKE_FIVE:
            return self.five if self.five is not None else 0.0
        a = self.acts[action.lounger]
        if a is None:
            return 0.0
        if a[1]:
            g = self.invade_gain(chips, total)
            return a[0] + self.chip_value(chips + g) - self.chip_value(chips)
        return a[0]

    def table(self, chips_max: int, total: int) -> list[list[list[list[float]]]]:
        """``table[chips][lifeguards][colour][n]`` for :class:`TurnPlanner`."""
        guard0 = self.state.guard
        out = []
        for chips in range(chips_max + 1):
            inv = self.chip_value(chips + self.invade_gain(chips, total)) - self.chip_value(chips)
            by_l = []
            for lg in range(7):
                blocked = BLOCKED[advance(guard0, lg) + 1]
                rows = []
                for c in range(N_COLOURS):
                    best_at = [0.0] * 8
                    for i in REGULAR:
                        a = self.acts[i]
                        if a is None or LOUNGER_COLOUR[i] != c or i in blocked:
                            continue
                        val = a[0] + (inv if a[1] else 0.0)
                        v = LOUNGER_VALUE[i]
                        if val > best_at[v]:
                            best_at[v] = val
                    if self.five is not None and self.five > best_at[5]:
                        best_at[5] = self.five
                    run_best = 0.0
                    for n in range(8):
                        run_best = max(run_best, best_at[n])
                        best_at[n] = run_best
                    rows.append(best_at)
                by_l.append(rows)
            out.append(by_l)
        return out


# ----------------------------------------------------------------------------- the player


class SearchPlayer:
    """The decision maker, independent of the referee: ``choose(state, seconds)``."""

    def __init__(self, params: Params | None = None) -> None:
        self.params = params or Params()
        self.greedy = GreedyPolicy()
        self._plan_key: tuple[object, ...] | None = None
        self._planner: TurnPlanner | None = None

    def choose(self, state: State, budget: float = 0.15) -> Action:
        legal = legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        if state.phase == Phase.SETUP:
            if self.params.setup is None:
                return self.greedy.choose(state)
            return self._place(state, legal)
        if state.phase == Phase.ROLL:
            return self._roll(state)
        return self._act(state, legal)

    def _place(self, state: State, legal: Sequence[Action]) -> Action:
        me = state.seat
        mine = [0] * N_COLOURS
        for i in REGULAR:
            if state.towel[i] == me:
                mine[LOUNGER_COLOUR[i]] += 1
        w = self.params.setup
        assert w is not None
        cb = self.params.colour_bonus
        return max(
            legal,
            key=lambda a: (w[LOUNGER_VALUE[a.lounger]] + cb * mine[LOUNGER_COLOUR[a.lounger]], -a.lounger),
        )

    def _planner_for(self, state: State) -> tuple[TurnPlanner, Evaluator, int]:
        me = state.seat
        total = state.chips[me] + state.pool
        key = (state.turn, state.seat, state.guard, state.towel, state.secured, state.figure, total)
        ev = Evaluator(state, self.params)
        if key != self._plan_key or self._planner is None:
            self._planner = TurnPlanner(ev.table(state.chips[me], total), [ev.chip_value(c) for c in range(5)])
            self._plan_key = key
        return self._planner, ev, total

    def _roll(self, state: State) -> Action:
        planner, _, _ = self._planner_for(state)
        options = planner.decide(state.kept, state.last, state.chips[state.seat])
        return max(options, key=lambda o: o[0])[1]

    def _act(self, state: State, legal: Sequence[Action]) -> Action:
        me = state.seat
        ev = Evaluator(state, self.params)
        total = state.chips[me] + state.pool
        return max(legal, key=lambda a: ev.action_value(a, state.chips[me], total))


class SearchBot(Bot):
    """The SDK bot around :class:`SearchPlayer`."""

    name = "search"

    def __init__(self) -> None:
        super().__init__()
        self.player = SearchPlayer()

    def choose(self, state: State, legal: Sequence[Action]) -> Action:
        budget = 0.15 if self.decision is None else min(0.15, self.decision.time_left())
        start = time.monotonic()
        del start
        return self.player.choose(state, budget)


if __name__ == "__main__":
    run(SearchBot())
