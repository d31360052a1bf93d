#!/usr/bin/env python3
"""A valid bot that thinks 0.05 s per decision (well within the validation's 1 s): its validation
matches take a while, so a test can kill the server in the middle of one."""

import time

from arena.sdk import Bot, run


class SlowBot(Bot):
    name = "slow-valid"

    def choose(self, state, legal):
        time.sleep(0.05)
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(SlowBot())
