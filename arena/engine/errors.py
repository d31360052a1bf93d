"""Exceptions raised by the rules engine.

The split follows python-chess: text that is not an action at all is *invalid*
(:class:`InvalidActionError`), a well-formed action that the rules forbid now is *illegal*
(:class:`IllegalActionError`).  Both carry enough context to explain themselves.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises."""


class NotationError(EngineError, ValueError):
    """Text that is not in the canonical notation of rules.md section 6."""


def clipped(text: str) -> str:
    """``repr(text)``, or for a long text its first 60 characters' repr and the length: a bot may
    send 64 KiB, and an error message quotes what it sent more than once."""
    shown = repr(text)
    return shown if len(shown) <= 80 else f"{text[:60]!r}... ({len(text)} characters)"


class InvalidActionError(NotationError):
    """Malformed action text: it does not parse as any action of the notation."""

    def __init__(self, text: str, reason: str, context: str = "") -> None:
        self.text = text
        self.reason = reason
        where = f" ({context})" if context else ""
        super().__init__(f"malformed action {clipped(text)}{where}: {reason}")


class IllegalActionError(EngineError, ValueError):
    """A well-formed action that is not legal in the current state."""

    def __init__(self, action: str, phase: str, seat: int | None, reason: str) -> None:
        self.action = action
        self.phase = phase
        self.seat = seat
        self.reason = reason
        who = "chance" if seat is None else f"seat {seat}"
        super().__init__(f"illegal action {action!r} for {who} in phase {phase}: {reason}")


class IllegalThrowError(EngineError, ValueError):
    """A throw that cannot happen now: not a chance node, wrong number of dice, bad faces."""


class ReplayError(EngineError):
    """A game record that does not replay; ``line`` is 1-based (0 when no line applies)."""

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}" if line else reason)
