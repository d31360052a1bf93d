"""The referee: runs matches between bots connected over gRPC, checking every action.

The names below are loaded on first use, so that importing a light submodule
(``arena.referee.result``, ``arena.referee.faults``, ``arena.referee.timecontrol``) does not load
the gRPC server: the store and the sandbox import without gRPC (a test checks it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .faults import Forfeit, Reason
    from .result import MatchResult, SeatOutcome
    from .server import RefereeConfig, RefereeServer
    from .sessions import BotSession
    from .timecontrol import TimeControl

_WHERE = {
    "BotSession": ".sessions",
    "Forfeit": ".faults",
    "MatchResult": ".result",
    "Reason": ".faults",
    "RefereeConfig": ".server",
    "RefereeServer": ".server",
    "SeatOutcome": ".result",
    "TimeControl": ".timecontrol",
}

__all__ = [
    "BotSession",
    "Forfeit",
    "MatchResult",
    "Reason",
    "RefereeConfig",
    "RefereeServer",
    "SeatOutcome",
    "TimeControl",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its submodule on first use (PEP 562)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
