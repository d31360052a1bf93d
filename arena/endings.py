"""Words for how a match ended and how each seat came out of it, so a reader sees who forfeited.

The stored and reported ``termination`` values are terse: a match's is ``normal``, ``round-cap``
or ``forfeit`` (stopped early because a seat forfeited), and a seat's is its forfeit reason
(``crashed``, ``timeout``, ...) when it forfeited and otherwise the match's own value.  So the seat
that did *not* forfeit carries ``forfeit``: these helpers turn that into "won by forfeit" and the
offender's reason into "forfeited (disconnected)".  Pure functions of strings; no imports.
"""

from __future__ import annotations

from collections.abc import Sequence

MATCH_ENDS = ("normal", "round-cap", "forfeit")  # a match's termination values


def known_terminations() -> tuple[str, ...]:
    """Every termination value a match or a seat can have: the match ends, then the forfeit reasons."""
    from arena.referee.faults import Reason

    return (*MATCH_ENDS, *(str(r) for r in Reason))


def is_forfeit_reason(termination: str | None) -> bool:
    """Whether a seat's ``termination`` says that this seat forfeited (a reason such as ``crashed``)."""
    return termination is not None and termination not in MATCH_ENDS


def seat_label(termination: str | None, placing: int | None = None) -> str:
    """One seat's own outcome.

    >>> seat_label("disconnected")
    'forfeited (disconnected)'
    >>> seat_label("forfeit", placing=1)
    'won by forfeit'
    >>> seat_label("normal"), seat_label("round-cap"), seat_label(None)
    ('finished', 'round cap', '-')
    """
    if termination is None:
        return "-"
    if is_forfeit_reason(termination):
        return f"forfeited ({termination})"
    if termination == "forfeit":
        return "won by forfeit" if placing in (None, 1) else "others forfeited"
    return "round cap" if termination == "round-cap" else "finished"


def match_label(termination: str | None, forfeits: Sequence[tuple[str, str]] = ()) -> str:
    """How the match ended, naming who forfeited: ``forfeits`` are (name, reason) pairs.

    >>> match_label("forfeit", [("rb", "disconnected")])
    'rb forfeited (disconnected)'
    >>> match_label("normal", [("rb", "crashed"), ("x", "timeout")])
    'finished; rb forfeited (crashed), x forfeited (timeout)'
    >>> match_label("round-cap"), match_label("normal"), match_label(None)
    ('round cap', 'finished', '-')
    """
    who = ", ".join(f"{name} forfeited ({reason})" for name, reason in forfeits)
    if termination is None:
        return who or "-"
    if termination == "forfeit":
        return who or "stopped: a seat forfeited"
    base = "round cap" if termination == "round-cap" else "finished"
    return f"{base}; {who}" if who else base
