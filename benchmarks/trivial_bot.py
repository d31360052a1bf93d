#!/usr/bin/env python3
"""The cheapest possible SDK bot: always the first legal action (for latency benchmarks)."""

from arena.sdk import Bot, run


class FirstLegal(Bot):
    name = "first-legal"

    def choose(self, state, legal):
        return legal[0]


if __name__ == "__main__":
    run(FirstLegal())
