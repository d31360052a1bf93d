#!/usr/bin/env python3
"""A bot that picks uniformly among the legal actions.

It draws from the SDK's ``self.rng``, which is seeded from the match seed and its seat (the
Welcome's ``bot_seed``), so a rerun of the match repeats its choices exactly, whatever the match
id or the database.
"""

from arena.sdk import Bot, run


class RandomBot(Bot):
    name = "random"

    def choose(self, state, legal):
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(RandomBot())
