#!/usr/bin/env python3
"""A bot that picks uniformly among the legal actions."""

import random

from arena.sdk import Bot, run


class RandomBot(Bot):
    name = "random"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random()

    def choose(self, state, legal):
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(RandomBot())
