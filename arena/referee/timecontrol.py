"""Time control: a per-decision limit plus an overage bank, measured on the referee's clock."""

from __future__ import annotations

from dataclasses import dataclass

from arena.v1 import arena_pb2 as pb


@dataclass(frozen=True)
class TimeControl:
    """``move_time`` seconds per decision; time beyond it is drawn from a ``bank`` of seconds.

    ``unlimited`` (debug mode) disables every deadline.
    """

    move_time: float = 1.0
    bank: float = 10.0
    unlimited: bool = False

    def __post_init__(self) -> None:
        if self.move_time < 0 or self.bank < 0:
            raise ValueError("move time and bank must not be negative")

    def to_pb(self) -> pb.TimeControl:
        """The protocol message."""
        if self.unlimited:
            return pb.TimeControl(unlimited=True)
        return pb.TimeControl(move_time_ms=round(self.move_time * 1000), bank_ms=round(self.bank * 1000))

    def describe(self) -> str:
        """``0.5s + 10s bank`` or ``unlimited``."""
        return "unlimited" if self.unlimited else f"{self.move_time:g}s + {self.bank:g}s bank"


class SeatClock:
    """One seat's bank and think-time statistics."""

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.bank = control.bank
        self.total = 0.0
        self.max = 0.0
        self.decisions = 0

    def budget(self) -> float | None:
        """Seconds the next decision may take, or None without limits."""
        return None if self.control.unlimited else self.control.move_time + self.bank

    def charge(self, used: float) -> None:
        """Account a decision that took ``used`` seconds."""
        self.total += used
        self.max = max(self.max, used)
        self.decisions += 1
        if not self.control.unlimited:
            self.bank = max(0.0, self.bank - max(0.0, used - self.control.move_time))
