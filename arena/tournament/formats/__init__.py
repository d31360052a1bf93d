"""Tournament formats: one module per format, one line per format in :data:`REGISTRY`.

See :mod:`arena.tournament.formats.base` for the interface (``next(history)`` answers wait /
play these / finished) and its determinism contract.
"""

from __future__ import annotations

from .base import (
    Bye,
    Finished,
    Format,
    FormatError,
    History,
    Next,
    Pairing,
    Play,
    Recorded,
    Settings,
    Wait,
)
from .fixed import Gauntlet, RoundRobin
from .knockout import Knockout
from .ladder import Ladder
from .swiss import Swiss

REGISTRY: dict[str, type[Format]] = {
    RoundRobin.name: RoundRobin,
    Gauntlet.name: Gauntlet,
    Swiss.name: Swiss,
    Knockout.name: Knockout,
    Ladder.name: Ladder,
}


# Formats that never finish (the ladder): 'arena ladder run' plays them, not 'arena tournament'.
CONTINUOUS = (Ladder.name,)


def make(name: str, settings: Settings) -> Format:
    """The format ``name`` for ``settings``; :class:`FormatError` for an unknown name or
    settings it cannot play."""
    cls = REGISTRY.get(name)
    if cls is None:
        raise FormatError(f"unknown format {name!r}; choose one of {', '.join(REGISTRY)}")
    return cls(settings)


__all__ = [
    "CONTINUOUS",
    "REGISTRY",
    "Bye",
    "Finished",
    "Format",
    "FormatError",
    "History",
    "Next",
    "Pairing",
    "Play",
    "Recorded",
    "Settings",
    "Wait",
    "make",
]
