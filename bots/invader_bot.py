#!/usr/bin/env python3
"""A greedy variant that prefers invading other players' towels and spends chips freely.

It values an invasion above flipping a low towel (a point now, chips, and a blocked opponent),
and re-throws with a chip whenever a throw leaves it nothing worth taking.
"""

from arena.engine import ActionKind, GreedyPolicy
from arena.engine.policies import action_value
from arena.engine.state import Phase
from arena.sdk import Bot, run


def invader_value(state, action):
    value = action_value(state, action)
    if action.kind == ActionKind.INVADE:
        value += 1.5
    return value


class InvaderBot(Bot):
    name = "invader"

    def __init__(self) -> None:
        super().__init__()
        self.greedy = GreedyPolicy()

    def choose(self, state, legal):
        if state.phase == Phase.ACTION:
            return max(legal, key=lambda a: invader_value(state, a))
        choice = self.greedy.choose(state)
        if state.phase == Phase.ROLL and choice.kind == ActionKind.STOP:
            chip = next((a for a in legal if a.kind == ActionKind.CHIP), None)
            if chip is not None and sum(state.last[:5]) <= 2 and state.throw_no <= 3:
                return chip
        return choice


if __name__ == "__main__":
    run(InvaderBot())
