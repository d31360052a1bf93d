#!/usr/bin/env python3
"""The binary sample bot: packed by build.py into one executable file, ``dist/binbot``.

Strategy: the engine's greedy policy for setup and rolling; for the action, one ply of lookahead:
the legal action after which this seat leads the best other seat by the most (greedy order breaks
ties).  Inside the zipapp this file is ``__main__.py`` and ``arena`` (SDK, engine, wire, generated
protobuf code) is the copy packed next to it, so the file needs only a Python >= 3.11 with grpcio
and protobuf.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.engine import Action, GreedyPolicy, Phase, State, apply, scores
from arena.sdk import Bot, run


class BinBot(Bot):
    name = "binbot"
    version = "1"

    def __init__(self) -> None:
        super().__init__()
        self.greedy = GreedyPolicy()

    def choose(self, state: State, legal: Sequence[Action]) -> Action | str:
        preferred = self.greedy.choose(state)
        if state.phase != Phase.ACTION or len(legal) == 1:
            return preferred

        def lead(action: Action) -> tuple[int, bool]:
            pts = scores(apply(state, action))
            others = max(p for seat, p in enumerate(pts) if seat != state.seat)
            return pts[state.seat] - others, action == preferred

        return max(legal, key=lead)


if __name__ == "__main__":
    run(BinBot())
