"""Shared helpers of the environment tests."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from arena.engine import DiceStream, State, apply, apply_throw, legal_actions, new_game
from arena.engine.variants import STANDARD, Rules

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena.cli.main"]


def random_states(players: int, seed: int, limit: int = 100_000, rules: Rules = STANDARD) -> list[State]:
    """Every state (decisions, chance nodes and the end) of a random game under ``rules`` on the
    dice stream of ``seed``."""
    rng = random.Random(seed)
    dice = DiceStream(seed)
    s = new_game(players, rules)
    out = [s]
    while not s.is_over and len(out) < limit:
        if s.is_chance:
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
        else:
            s = apply(s, rng.choice(legal_actions(s)))
        out.append(s)
    return out


def run_arena(*args: str, home: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` as a real process with its own ARENA_HOME."""
    env = {**os.environ, "ARENA_HOME": str(home)}
    return subprocess.run([*ARENA, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def record_actions(text: str) -> list[str]:
    """The decisions of a game record, in order (notation)."""
    return [obj["action"] for obj in map(json.loads, text.splitlines()) if "action" in obj]
