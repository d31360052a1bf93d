#!/usr/bin/env python3
"""A kept-running bot that says on stderr when it has seen a game's dice and how long it lives.

Plays greedily.  Every 50 ms a thread writes ``ALIVE <time>``; when it has seen the first two
six-dice throws of a game it writes ``PLAY <time> <throws>`` (the throws name the game's seed:
every seating of a seed throws the same dice), and at the game's end ``KNOW <time> <throws>``.
The test reads these lines from the bots' logs: a process that knows a seed's dice must not be
alive while another seating of that seed is played (it could pass the throws on through the
machine's load, a channel that needs no network and no file)."""

import sys
import threading
import time

from arena.engine import GreedyPolicy
from arena.sdk import Bot, ThrowEvent, run


def say(line):
    print(line, file=sys.stderr, flush=True)


class WitnessBot(Bot):
    name = "witness"

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()
        self.throws = []
        self.told = False
        threading.Thread(target=self.beat, daemon=True).start()

    def beat(self):
        while True:
            say(f"ALIVE {time.time():.3f}")
            time.sleep(0.05)

    def signature(self):
        return "".join(str(face) for throw in self.throws[:2] for face in throw)

    def setup(self, welcome):
        self.throws, self.told = [], False

    def choose(self, state, legal):
        for event in self.decision.events:
            if isinstance(event, ThrowEvent) and len(event.faces) == 6:
                self.throws.append(event.faces)
        if not self.told and len(self.throws) >= 2:
            self.told = True
            say(f"PLAY {time.time():.3f} {self.signature()}")
        return self.policy.choose(state)

    def on_match_end(self, result):
        if len(self.throws) >= 2:
            say(f"KNOW {time.time():.3f} {self.signature()}")


if __name__ == "__main__":
    run(WitnessBot())
