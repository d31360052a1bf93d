#!/usr/bin/env python3
"""A well-behaved SDK bot whose per-match set-up takes 0.6 s (``SETUP_S`` seconds when set): a
match that ends meanwhile (its opponent died before connecting) ends while it still owes its Ready."""

import os
import time

from arena.sdk import Bot, run


class SlowSetup(Bot):
    name = "slow-setup"

    def setup(self, welcome):  # type: ignore[no-untyped-def]
        time.sleep(float(os.environ.get("SETUP_S", "0.6")))

    def choose(self, state, legal):  # type: ignore[no-untyped-def]
        return legal[0]


if __name__ == "__main__":
    run(SlowSetup())
