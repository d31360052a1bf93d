#!/usr/bin/env python3
"""The naive greedy (the project's first greedy, kept for comparison as ``greedy-naive``).

Rolling: keeps the most promising colour by a rough guess of what one more throw brings, stops
otherwise; action: the best lounger by a fixed table (``arena.engine.GreedyPolicy``).
"""

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run


class GreedyNaiveBot(Bot):
    name = "greedy-naive"

    def __init__(self) -> None:
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        return self.policy.choose(state)


if __name__ == "__main__":
    run(GreedyNaiveBot())
