#!/usr/bin/env python3
"""An SDK bot that plays greedily and writes, once per match, the rules the SDK hands it (from
the Welcome, and on the state of its first decision) to stderr: ``rules-seen bot=V state=V end=N``."""

import sys

from arena.engine import make_policy
from arena.sdk import Bot, run


class RulesBot(Bot):
    name = "rules"

    def on_match_start(self, welcome):
        self.policy = make_policy("greedy", 0, self.seat)
        self.told = False

    def choose(self, state, legal):
        if not self.told:
            self.told = True
            print(
                f"rules-seen bot={self.rules.version} state={state.rules.version} "
                f"end={state.rules.end_unoccupied} welcome={self.welcome.rules_version}",
                file=sys.stderr,
                flush=True,
            )
        return self.policy.choose(state)


run(RulesBot())
