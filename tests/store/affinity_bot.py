#!/usr/bin/env python3
"""Plays the engine's cheap greedy policy (a short game: the first legal action plays every game to the
round cap) and, once at start, writes the cores it may run on and those of
its parent (the worker that started it) to ``$AFFINITY_OUT/<pid>.json``."""

import json
import os

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run


class AffinityBot(Bot):
    name = "affinity"

    def choose(self, state, legal):
        return GreedyPolicy().choose(state)


if __name__ == "__main__":
    out = os.environ["AFFINITY_OUT"]
    with open(os.path.join(out, f"{os.getpid()}.json"), "w") as fh:
        json.dump(
            {"bot": sorted(os.sched_getaffinity(0)), "worker": sorted(os.sched_getaffinity(os.getppid()))}, fh
        )
    raise SystemExit(run(AffinityBot()))
