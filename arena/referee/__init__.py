"""The referee: runs matches between bots connected over gRPC, checking every action."""

from .faults import Forfeit, Reason
from .result import MatchResult, SeatOutcome
from .server import RefereeConfig, RefereeServer
from .sessions import BotSession
from .timecontrol import TimeControl

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
