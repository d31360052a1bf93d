#!/usr/bin/env python3
"""Plays greedily and remembers the dice of every game it plays, to play a later game with dice
it has seen: every seating of a duplicate-dice seed throws the same dice, and a bot sees every
throw (the events of its requests).

It keeps the throws of each game it plays in this process.  A game is recognised when its first
two six-dice throws (the opening throws of the first turns, the same under every seating of a
seed) are those of an earlier game; from then on it could know every throw to come.  At the end
of each game it logs one line on stderr (the form of _common.attempt; a single file, so that
it can be registered as a tournament bot):

    recall: remembered dice: SUCCEEDED game 2 repeats the throws of game 1
    recall: remembered dice: BLOCKED Fresh: game 1 of this process, no earlier game had its dice

The arena must never let it succeed: a kept-running process is replaced before it plays a seed
it has played.
"""

import sys

from arena.engine import GreedyPolicy
from arena.sdk import Bot, ThrowEvent, run


class RecallBot(Bot):
    name = "recall"

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()
        self.games = []  # the six-dice throws of every game this process played, in order

    def setup(self, welcome):
        self.games.append([])

    def choose(self, state, legal):
        for event in self.decision.events:
            if isinstance(event, ThrowEvent) and len(event.faces) == 6:
                self.games[-1].append(event.faces)
        return self.policy.choose(state)

    def on_match_end(self, result):
        now = self.games[-1][:2]
        number = len(self.games)

        for k, earlier in enumerate(self.games[:-1], start=1):
            if len(now) == 2 and earlier[:2] == now:
                line = f"SUCCEEDED game {number} repeats the throws of game {k}"
                break
        else:
            line = f"BLOCKED Fresh: game {number} of this process, no earlier game had its dice"
        print(f"recall: remembered dice: {line}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run(RecallBot())
