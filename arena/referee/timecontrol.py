"""Time control: a per-decision limit plus an overage bank, measured on the referee's clock."""

from __future__ import annotations

from dataclasses import dataclass

MAX_MOVE_TIME = 86_400.0
"""The longest move time, seconds (a day per decision; the wire carries milliseconds in 32 bits,
so a limit is needed, and ``inf`` crashed every seat: 'cannot convert float infinity to integer')."""
MAX_BANK = 864_000.0
"""The largest bank, seconds (ten days)."""


@dataclass(frozen=True)
class TimeControl:
    """``move_time`` seconds per decision; time beyond it is drawn from a ``bank`` of seconds.

    ``unlimited`` (debug mode) disables every deadline.  With ``cpu`` the bot is charged the CPU
    time its whole process tree used for the decision instead of the wall-clock time (where the
    launcher can measure it); a wall-clock limit of ``2 * budget + 1`` seconds still applies, so a
    bot that sleeps or waits cannot stall a match.

    A tournament stores it in three columns (``move_time``, ``bank``, ``cpu_clock``); it is read
    back by :func:`arena.store.tournaments.time_control_of`.  This module imports nothing of the
    project and no gRPC: the store imports it.
    """

    move_time: float = 1.0
    bank: float = 10.0
    unlimited: bool = False
    cpu: bool = False

    def __post_init__(self) -> None:
        if self.move_time < 0 or self.bank < 0:
            raise ValueError("move time and bank must not be negative")
        if not self.move_time <= MAX_MOVE_TIME or not self.bank <= MAX_BANK:  # (inf and nan too)
            raise ValueError(
                f"move time must be at most {MAX_MOVE_TIME:g} s and bank at most {MAX_BANK:g} s "
                f"(finite numbers), got {self.move_time:g} and {self.bank:g}"
            )

    def describe(self) -> str:
        """``0.5s + 10s bank`` or ``unlimited``."""
        if self.unlimited:
            return "unlimited"
        kind = " CPU" if self.cpu else ""
        return f"{self.move_time:g}s{kind} + {self.bank:g}s{kind} bank"


class SeatClock:
    """One seat's bank and think-time statistics."""

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.bank = control.bank
        self.total = 0.0
        self.max = 0.0
        self.decisions = 0
        self.cpu_start: float | None = None
        self.cpu_total: float | None = None

    def budget(self) -> float | None:
        """Seconds (wall or CPU) the next decision may use, or None without limits."""
        return None if self.control.unlimited else self.control.move_time + self.bank

    def wall_budget(self) -> float | None:
        """The wall-clock deadline of the next decision, in seconds from the request."""
        budget = self.budget()
        if budget is None or not self.control.cpu:
            return budget
        return 2 * budget + 1.0

    def charge(self, used: float, cpu: float | None = None) -> None:
        """Account a decision that took ``used`` wall seconds (and ``cpu`` CPU seconds)."""
        self.total += used
        self.max = max(self.max, used)
        self.decisions += 1
        if not self.control.unlimited:
            spent = cpu if self.control.cpu and cpu is not None else used
            self.bank = max(0.0, self.bank - max(0.0, spent - self.control.move_time))

    def limit_detail(self, cpu: bool = False) -> str:
        """What the next decision's limit is made of, for a forfeit's detail: ``limit 1.150s:
        0.200s per decision + 0.950s left in the bank``.  ``cpu`` True: the CPU-time limit of a
        CPU-mode decision; False: the wall-clock deadline (in CPU mode the wall-clock backstop,
        twice the CPU budget plus one second)."""
        budget = self.budget()
        if budget is None:
            return "no limit"
        parts = f"{self.control.move_time:.3f}s per decision + {self.bank:.3f}s left in the bank"
        if cpu or not self.control.cpu:
            return f"limit {budget:.3f}s: {parts}"
        wall = self.wall_budget() or 0.0
        return (
            f"wall-clock limit {wall:.3f}s: in CPU-time mode twice the CPU budget of "
            f"{budget:.3f}s ({parts}) plus 1s"
        )

    def over_budget(self, cpu: float | None) -> bool:
        """In CPU mode: did the decision use more CPU than move time + bank?"""
        budget = self.budget()
        return bool(self.control.cpu and budget is not None and cpu is not None and cpu > budget)
