"""The reference rules engine: a frozen copy of the plain, unoptimised engine (before issue 20).

:mod:`arena.engine` is the engine everybody uses; this package keeps the straightforward
implementation it was optimised from, unchanged, as

* the **baseline** that ``benchmarks/engine.py`` measures in the same run (steps/s of both and
  the ratio), and
* the **oracle** that ``tests/engine/test_fast_vs_reference.py`` checks the engine against on
  random games of 2, 3 and 4 players (same legal actions, states, scores and records).

It shares the plain data modules (board, actions, notation, errors, variants, ``Phase``) with the
engine and has its own ``State`` class, rules, dice stream, policies and game loop.  Never import
it from production code, and never optimise it: a change here changes what the engine is checked
against.
"""

from __future__ import annotations

from .chance import DiceStream, stream_faces
from .game import PlayedGame, play_game, scores
from .policies import GreedyPolicy, RandomPolicy, make_policy
from .rules import apply, apply_throw, legal_actions, reachable
from .state import State, new_game

__all__ = [
    "DiceStream",
    "GreedyPolicy",
    "PlayedGame",
    "RandomPolicy",
    "State",
    "apply",
    "apply_throw",
    "legal_actions",
    "make_policy",
    "new_game",
    "play_game",
    "reachable",
    "scores",
    "stream_faces",
]
