#!/usr/bin/env python3
"""The search sample: exact expectimax over the whole rolling of a turn, future-aware worths.

The player is :class:`arena.strength.search.SearchPolicy` (its docstring explains the search, the
worths, the opponent modelling and the last-turn play).  It reads no clock and draws no random
number: the same state always gives the same choice, on an idle or a loaded machine (a decision
takes a few milliseconds on average and at most about 30 ms of one core).

Only as a guard against a forfeit: when less than ``SEARCH_BOT_RESERVE`` seconds (default 0.05)
of the move time and the bank are left when a rolling decision arrives, it answers with the
one-ply greedy (about 1 ms) instead.

The leaf evaluation can be replaced without touching this file: ``SEARCH_BOT_VALUE=pkg.mod:name``
names a worth model or a learned state value ``(state, seat) -> expected final margin``
(:func:`arena.strength.search.load_worth_model`).
"""

import os
import sys

from arena.engine import Phase
from arena.sdk import Bot, run
from arena.strength.dice import warm
from arena.strength.greedy import OnePlyGreedy
from arena.strength.search import SearchPolicy, load_worth_model


class SearchBot(Bot):
    name = "search"
    version = "2"

    def __init__(self) -> None:
        super().__init__()
        spec = os.environ.get("SEARCH_BOT_VALUE", "")
        model = load_worth_model(spec) if spec else None
        if model is not None:
            print(f"search: leaf evaluation from {spec}", file=sys.stderr, flush=True)
        self.policy = SearchPolicy(worth_model=model)
        self.fallback = OnePlyGreedy()
        self.reserve = float(os.environ.get("SEARCH_BOT_RESERVE", "0.05"))
        self.fallbacks = 0
        warm()

    def choose(self, state, legal):
        d = self.decision
        near_out = d is not None and not d.unlimited and d.time_left(use_bank=True, margin=0.0) < self.reserve
        if state.phase == Phase.ROLL and near_out:
            self.fallbacks += 1
            return self.fallback.choose(state)
        return self.policy.choose(state)


if __name__ == "__main__":
    run(SearchBot())
