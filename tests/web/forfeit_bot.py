#!/usr/bin/env python3
"""A test bot (self-contained, so it can be registered): plays the first legal action until its
FORFEIT_AT-th decision (default 30, i.e. in its first game turns), then answers an action that is
well-formed but not legal, so the referee forfeits it (illegal-action) and plays on for it."""

import os

from arena.sdk import Bot, run


class ForfeitBot(Bot):
    name = "forfeiter"

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.at = int(os.environ.get("FORFEIT_AT", "30"))

    def on_match_start(self, welcome):
        self.count = 0  # a bot kept running across matches starts counting afresh

    def choose(self, state, legal):
        self.count += 1
        texts = [str(a) for a in legal]
        if self.count >= self.at:
            for bad in ("take-five five-1", "flip five-2", "place green-4a", "pass"):
                if bad not in texts:
                    return bad
        return legal[0]


if __name__ == "__main__":
    run(ForfeitBot())
