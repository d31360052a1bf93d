#!/usr/bin/env python3
"""OpenSpiel's MCTS bot playing in the arena, through the adapter (needs the ``rl`` extra).

    arena match examples/mcts_bot.py random --seed 1

Every decision runs OpenSpiel's own ``MCTSBot`` on the ``python_cool_am_pool`` game, starting
from the state the referee sent; the leaves are valued by the scores as they stand
(:class:`arena.envs.openspiel.ScoreEvaluator`: random rollouts of this game are long).
``MCTS_SIMULATIONS`` (environment, default 40) sets the search size.
"""

import os

import numpy as np
from open_spiel.python.algorithms.mcts import MCTSBot

from arena.envs.adapter import OpenSpielBot
from arena.envs.openspiel import ScoreEvaluator
from arena.sdk import run

SIMULATIONS = int(os.environ.get("MCTS_SIMULATIONS", "40"))


def make(game, seat, seed):
    return MCTSBot(
        game,
        uct_c=2.0,
        max_simulations=SIMULATIONS,
        evaluator=ScoreEvaluator(),
        random_state=np.random.RandomState(seed % 2**32),
        solve=False,
    )


if __name__ == "__main__":
    run(OpenSpielBot(make, name="mcts"))
