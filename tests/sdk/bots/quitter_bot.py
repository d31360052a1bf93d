#!/usr/bin/env python3
"""An SDK bot that answers an illegal action at its third decision (and so forfeits): the seats
that play on then see its turns pass automatically."""

from arena.sdk import Bot, run


class Quitter(Bot):
    name = "quitter"

    def __init__(self):
        super().__init__()
        self.n = 0

    def choose(self, state, legal):
        self.n += 1
        if self.n == 3:
            return "take-five five-1" if str(legal[0]) != "take-five five-1" else "stop"
        return legal[0]


if __name__ == "__main__":
    run(Quitter())
