#!/usr/bin/env python3
"""The greedy sample: plain one-ply play, rolling decisions by the exact expected worth.

It takes the action worth most now; while rolling it compares STOP with every KEEP (and, when
the throw is hopeless, a CHIP) by the exact distribution of the next throw and the best action
each outcome would reach.  See ``arena/strength/greedy.py``.  (``bots/greedy_naive_bot.py`` is the
project's first, naive greedy.)
"""

from arena.sdk import Bot, run
from arena.strength.dice import warm
from arena.strength.greedy import OnePlyGreedy


class GreedyBot(Bot):
    name = "greedy"
    version = "2"

    def __init__(self) -> None:
        super().__init__()
        self.policy = OnePlyGreedy()
        warm()

    def choose(self, state, legal):
        return self.policy.choose(state)


if __name__ == "__main__":
    run(GreedyBot())
