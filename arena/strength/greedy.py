"""The sample ``greedy``: plain one-ply play with the exact throw distribution.

* **Setup** (R8): the most valuable free lounger, preferring colours where it already has towels
  (as the naive greedy, ``bots/greedy_naive_bot.py``).
* **Rolling** (R10-R15): STOP is worth the best action the result reaches now; every KEEP is worth
  the expectation, over the **exact** distribution of the re-throw of the other colour dice, of
  the best action each outcome would reach (the lifeguard's move included, R15); CHIP likewise
  with every die of the last throw re-thrown (R12, R14), but a chip is spent only when the throw
  is hopeless (STOP reaches nothing).  Values from :func:`arena.strength.worth.points_now`;
  ties go to the earlier legal action (STOP first).
* **Action** (R19-R23): the action worth most now, what it takes from others included.

No randomness and no clock: the same state always gives the same choice.
"""

from __future__ import annotations

from arena.engine import Action, ActionKind, Phase, State, legal_actions
from arena.engine.board import LOUNGER_COLOUR, LOUNGER_VALUE, N_COLOURS, REGULAR

from .rolling import Leaves, one_ply
from .worth import points_now


def setup_choice(state: State, legal: tuple[Action, ...]) -> Action:
    """The most valuable free lounger, preferring colours with more own towels (R8)."""
    me = state.seat
    mine = [0] * N_COLOURS
    for i in REGULAR:
        if state.towel[i] == me:
            mine[LOUNGER_COLOUR[i]] += 1
    return max(legal, key=lambda a: (LOUNGER_VALUE[a.lounger], mine[LOUNGER_COLOUR[a.lounger]]))


class OnePlyGreedy:
    """The one-ply greedy policy (module docstring): ``choose(state) -> Action``."""

    def choose(self, state: State) -> Action:
        """The greedy choice among ``legal_actions(state)``."""
        legal = legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        if state.phase == Phase.SETUP:
            return setup_choice(state, legal)
        if state.phase == Phase.ROLL:
            return best(self.roll_values(state))
        worths = points_now(state)
        chips = state.chips[state.seat]
        return max(legal, key=lambda a: worths.action_worth(a, chips))

    @staticmethod
    def roll_values(state: State) -> list[tuple[float, Action]]:
        """The one-ply value of every rolling choice the greedy considers (CHIP only when the
        throw is hopeless), in the engine's order."""
        chips = state.chips[state.seat]
        worths = points_now(state)
        leaves = Leaves.of(worths, chips)
        options = one_ply(leaves, state.kept, state.last, chips)
        stop_value = options[0][0] - worths.chip_value[chips]
        if stop_value > 0.0:  # not hopeless: no chip
            options = [o for o in options if o[1].kind != ActionKind.CHIP]
        return options


def best(options: list[tuple[float, Action]]) -> Action:
    """The first option of the highest value (so ties go to STOP, then CHIP, then KEEPs)."""
    top = options[0]
    for o in options[1:]:
        if o[0] > top[0] + 1e-12:
            top = o
    return top[1]
