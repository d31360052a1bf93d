"""The record of one forfeit, and the sandbox's process status read as a forfeit reason.

The vocabulary itself (:class:`Reason`, with the match's endings) lives in :mod:`arena.endings`,
which imports nothing; it is re-exported here so ``from arena.referee.faults import Reason`` keeps
working.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.endings import Reason
from arena.sandbox.status import Probed, ProcessStatus

__all__ = ["Forfeit", "Reason", "process_forfeit", "reason_of_process"]


def reason_of_process(status: ProcessStatus) -> Reason:
    """The forfeit a bot process's status means: it exited -> ``crashed``, it is stopped -> ``stalled``."""
    return {ProcessStatus.EXITED: Reason.CRASHED, ProcessStatus.STOPPED: Reason.STALLED}[status]


def process_forfeit(probed: Probed | None) -> tuple[Reason, str] | None:
    """A launcher's probe (:meth:`arena.sandbox.BotProcess.probe`) in the referee's terms: the
    reason and the same words, or None while the process runs normally."""
    return None if probed is None else (reason_of_process(probed[0]), probed[1])


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
