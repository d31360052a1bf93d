"""The closed vocabulary of forfeits, and the record of one."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Reason(StrEnum):
    """Why a seat forfeited.  Every failure of a bot ends in exactly one of these."""

    TIMEOUT = "timeout"  # no answer within move time + bank
    ILLEGAL_ACTION = "illegal-action"  # a well-formed action the rules forbid now
    MALFORMED_ACTION = "malformed-action"  # not an action: bad notation, bad bytes, wrong id, flood
    DISCONNECTED = "disconnected"  # the stream closed while the match was on
    CRASHED = "crashed"  # the bot's process exited during the match
    STALLED = "stalled"  # the connection stopped answering keepalive pings (frozen peer)
    NO_SHOW = "no-show"  # did not connect before the match started


@dataclass(frozen=True)
class Forfeit:
    """One forfeit: the seat, the reason, a human-readable detail and the evidence."""

    seat: int
    reason: Reason
    detail: str
    at_event: int  # number of game events recorded when it happened
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The forfeit as it appears on the replay's result line."""
        return {
            "seat": self.seat,
            "reason": str(self.reason),
            "detail": self.detail,
            "at_event": self.at_event,
            **({"evidence": self.evidence} if self.evidence else {}),
        }
