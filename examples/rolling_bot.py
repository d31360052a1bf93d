#!/usr/bin/env python3
"""The trained rolling agent as an arena bot (train it first: train_rolling.py).

    arena evaluate examples/rolling_bot.py --vs random --games 40

The agent's table is read from ``rolling_agent.json`` next to this file (or from the file named
by ``ROLLING_AGENT``).  The policy is wrapped by :class:`arena.envs.adapter.PolicyBot`: the
referee's state becomes the environment's observation and mask, the agent answers an action
index, exactly as in training.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rolling_agent import RollingAgent  # noqa: E402

from arena.envs.adapter import PolicyBot  # noqa: E402
from arena.sdk import run  # noqa: E402

if __name__ == "__main__":
    table = Path(os.environ.get("ROLLING_AGENT") or HERE / "rolling_agent.json")
    run(PolicyBot(RollingAgent.load(table), name="rolling"))
