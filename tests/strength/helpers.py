"""Helpers for the strength tests: load a sample bot script and build positions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from arena.engine import (
    Action,
    ActionKind,
    Phase,
    State,
    apply,
    from_snapshot,
    new_game,
    parse_action,
    to_snapshot,
)
from arena.engine.board import LOUNGER_BY_NAME, REGULAR

ROOT = Path(__file__).resolve().parents[2]


def load_bot_module(name: str) -> ModuleType:
    """A sample bot's module (``bots/<name>_bot.py``), imported from its script."""
    key = f"{name}_bot_h18"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, ROOT / "bots" / f"{name}_bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def lid(name: str) -> int:
    """A lounger's id from its name."""
    return LOUNGER_BY_NAME[name].id


def placed(players: int, *names: str) -> State:
    """A setup in progress: the placements ``names`` in seat order (seat 0 first, R8)."""
    s = new_game(players)
    for name in names:
        s = apply(s, parse_action(f"place {name}"))
    return s


def after_setup(players: int) -> State:
    """The state after a complete setup in which regular lounger k went to seat k % players."""
    queue = {seat: [i for i in REGULAR if i % players == seat] for seat in range(players)}
    s = new_game(players)
    while s.phase == Phase.SETUP:
        s = apply(s, Action(ActionKind.PLACE, queue[s.seat].pop(0)))
    return s


def edit(state: State, loungers: dict[str, dict[str, Any]] | None = None, **fields: Any) -> State:
    """``state`` with snapshot fields and lounger entries replaced."""
    snap = to_snapshot(state)
    for key, value in fields.items():
        assert key in snap, key
        snap[key] = value
    for name, change in (loungers or {}).items():
        entry = next(lo for lo in snap["loungers"] if lo["name"] == name)
        entry.update(change)
    return from_snapshot(snap)


def secure_all_but(state: State, keep: set[str]) -> State:
    """Secure every regular lounger except those named in ``keep``, and give both five-loungers
    to the last seat (a near-final board where only ``keep`` can still be used)."""
    snap = to_snapshot(state)
    last = state.players - 1
    for entry in snap["loungers"]:
        if entry["name"].startswith("five"):
            entry.update(towel=last, side="guest")
        elif entry["name"] not in keep:
            entry["side"] = "guest"
    snap["towels"][last] -= 2
    return from_snapshot(snap)
