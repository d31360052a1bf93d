#!/usr/bin/env python3
"""A bot that picks uniformly among the legal actions.

Its generator is seeded from the match id and its seat, so a replayed match (same seed, same
seating, same match id) repeats its choices exactly.
"""

import random

from arena.sdk import Bot, run


class RandomBot(Bot):
    name = "random"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random()

    def on_match_start(self, welcome):
        self.rng = random.Random(f"{welcome.match_id}:{welcome.seat}")

    def choose(self, state, legal):
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(RandomBot())
