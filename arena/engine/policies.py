"""Built-in policies: a uniform random player and a one-step greedy player.

A policy maps a decision state to one of its legal actions.  Both are deterministic given their
construction: :class:`RandomPolicy` draws from its own seeded generator, :class:`GreedyPolicy`
uses no randomness at all.  Strong players live in ``bots/``; these are baselines and the
referee-free way to play a game.
"""

from __future__ import annotations

import random
from typing import Protocol

from .actions import Action, ActionKind
from .board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    CHIPS_PER_INVASION,
    FIVES,
    LIFEGUARD,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    REGULAR,
    advance,
)
from .rules import legal_actions
from .state import Phase, State


class Policy(Protocol):
    """Anything that picks a legal action for the seat to act."""

    def choose(self, state: State) -> Action:
        """One of ``legal_actions(state)``."""
        ...


class RandomPolicy:
    """Uniformly random among the legal actions, from a generator seeded at construction."""

    def __init__(self, seed: int | str) -> None:
        self.rng = random.Random(seed)
        # The generator whose getrandbits choose() inlines (only a plain random.Random qualifies).
        self._rng: random.Random | None = self.rng
        self._getrandbits = self.rng.getrandbits

    def choose(self, state: State) -> Action:
        """A uniformly random legal action: exactly ``self.rng.choice(legal_actions(state))``.

        For a plain :class:`random.Random` the draw is ``random.choice``'s own algorithm (its
        ``_randbelow``: ``getrandbits`` of the length's bit count until below the length), inlined:
        the same actions from the same seed, without two Python-level calls per decision.
        """
        legal = state._legal
        if legal is None:
            legal = legal_actions(state)
        n = len(legal)
        rng = self.rng
        if rng is not self._rng or not n:  # a replaced generator, or choice's IndexError
            return rng.choice(legal)
        getrandbits = self._getrandbits
        k = n.bit_length()
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return legal[r]


def action_value(state: State, action: Action) -> float:
    """The greedy estimate of what a lounger action is worth to the seat to act (points)."""
    kind = action.kind
    if kind == ActionKind.PASS:
        return 0.0
    v = LOUNGER_VALUE[action.lounger]
    if kind == ActionKind.FLIP:
        return float(v)
    if kind == ActionKind.RECLAIM:
        return v + 1.0  # my towel is secured and the intruder loses a point
    if kind == ActionKind.CONQUER:
        return v - 0.5  # the figure's point becomes the lounger's value; the figure is reusable
    if kind == ActionKind.TAKE_FIVE:
        return 5.0
    if kind == ActionKind.INVADE:
        me = state.seat
        gain = min(CHIPS_PER_INVASION, CHIPS_MAX_HELD - state.chips[me], state.pool)
        return 1.0 + 0.5 * gain + 0.25  # a point now, chips, and the owner cannot flip it
    return 0.0


class GreedyPolicy:
    """Keeps the most promising colour, stops when more dice would not pay, takes the best action.

    Setup: the most valuable free lounger, preferring colours where it already has towels.
    Rolling: for each colour in the last throw, the value of the best lounger it could use with
    the dice it would have after one more throw; keeps all dice of the best colour while that
    beats what stopping now gives, otherwise stops; spends a chip only on a throw that reaches
    nothing and leaves no KEEP.  Action: the highest :func:`action_value`.
    """

    def choose(self, state: State) -> Action:
        """The greedy choice among ``legal_actions(state)``."""
        legal = legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        if state.phase == Phase.SETUP:
            return self._place(state, legal)
        if state.phase == Phase.ROLL:
            return self._roll(state, legal)
        return max(legal, key=lambda a: action_value(state, a))

    @staticmethod
    def _place(state: State, legal: tuple[Action, ...]) -> Action:
        me = state.seat
        mine = [0] * N_COLOURS
        for i in REGULAR:
            if state.towel[i] == me:
                mine[LOUNGER_COLOUR[i]] += 1
        return max(legal, key=lambda a: (LOUNGER_VALUE[a.lounger], mine[LOUNGER_COLOUR[a.lounger]]))

    def _best_with(self, state: State, colour: int, n: int, guard: int) -> float:
        """Best action value using ``n`` dice of ``colour`` with the lifeguard on ``guard``."""
        me = state.seat
        blocked = BLOCKED[guard + 1]
        best = 0.0
        for i in REGULAR:
            if LOUNGER_COLOUR[i] != colour or LOUNGER_VALUE[i] > n or i in blocked:
                continue
            if state.secured[i]:
                continue
            owner, fig = state.towel[i], state.figure[i]
            v = LOUNGER_VALUE[i]
            if owner == me:
                val = v + (1.0 if fig >= 0 else 0.0)
            elif fig < 0:
                val = 1.5 if state.figures[me] else 0.0
            elif fig == me:
                val = v - 0.5 if state.towels[me] else 0.0
            else:
                val = 0.0
            best = max(best, val)
        if n >= 5 and state.towels[me] and any(state.towel[i] < 0 for i in FIVES):
            best = max(best, 5.0)
        return best

    def _roll(self, state: State, legal: tuple[Action, ...]) -> Action:
        kept, last = state.kept, state.last
        guards = kept[LIFEGUARD] + last[LIFEGUARD]
        guard = advance(state.guard, guards)
        now = max(self._best_with(state, c, kept[c] + last[c], guard) for c in range(N_COLOURS))
        colour_dice = sum(last[:N_COLOURS])
        best_keep: Action | None = None
        best_hope = now
        for c in range(N_COLOURS):
            if last[c] == 0 or last[c] >= colour_dice:
                continue
            rest = colour_dice - last[c]
            hope = self._best_with(state, c, kept[c] + last[c] + (rest + 2) // 3, guard)
            if hope > best_hope:
                best_hope = hope
                keep = [0] * N_COLOURS
                keep[c] = last[c]
                best_keep = next(a for a in legal if a.kind == ActionKind.KEEP and list(a.keep) == keep)
        if best_keep is not None:
            return best_keep
        if now == 0.0 and colour_dice < 2 and any(a.kind == ActionKind.CHIP for a in legal):
            return next(a for a in legal if a.kind == ActionKind.CHIP)
        return legal[0]  # STOP


POLICIES = ("random", "greedy")


def make_policy(name: str, seed: int, seat: int) -> Policy:
    """A built-in policy by name; the random one is seeded from the match seed and the seat."""
    if name == "random":
        return RandomPolicy(f"{seed}:{seat}")
    if name == "greedy":
        return GreedyPolicy()
    raise ValueError(f"unknown policy {name!r} (choose from {', '.join(POLICIES)})")
