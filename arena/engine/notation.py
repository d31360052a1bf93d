"""Canonical text for faces, throws, loungers and track fields (rules.md section 6).

Actions have their notation in :mod:`arena.engine.actions`.  Parsing is strict: text that is not
exactly canonical raises :class:`NotationError` saying what was expected.  Every ``parse_*``
function is total: for any argument (any text, or not text at all) it returns its value or
raises :class:`NotationError`, never anything else.
"""

from __future__ import annotations

from collections.abc import Sequence

from .board import FACES, LOUNGER_BY_NAME, N_FACES, TRACK_NAMES, Lounger
from .errors import NotationError

_FACE_ID = {name: i for i, name in enumerate(FACES)}


def face_name(face: int) -> str:
    """``green`` ... ``blue``, ``lifeguard`` for face ids 0..5."""
    return FACES[face]


def parse_face(text: str) -> int:
    """The face id of a face name."""
    try:
        return _FACE_ID[text]
    except (KeyError, TypeError):  # TypeError: unhashable, so not a name
        raise NotationError(f"unknown face {text!r} (faces: {', '.join(FACES)})") from None


def counts_of(faces: Sequence[int]) -> tuple[int, ...]:
    """Per-face counts (length 6) of a sequence of face ids."""
    counts = [0] * N_FACES
    for f in faces:
        counts[f] += 1
    return tuple(counts)


def faces_of(counts: Sequence[int]) -> tuple[int, ...]:
    """The face ids of per-face counts, in canonical order."""
    return tuple(f for f in range(N_FACES) for _ in range(counts[f]))


def format_throw(faces: Sequence[int]) -> str:
    """``throw green,green,red,lifeguard``: the faces in canonical order."""
    return "throw " + ",".join(FACES[f] for f in sorted(faces))


def format_counts(counts: Sequence[int]) -> str:
    """Comma-separated face names of per-face counts (``green,green,lifeguard``)."""
    return ",".join(FACES[f] for f in faces_of(counts))


def parse_throw(text: str) -> tuple[int, ...]:
    """Parse ``throw f1,f2,...`` (faces in canonical order) into face ids."""
    if not isinstance(text, str):
        raise NotationError(f"a throw must be text like 'throw green,red', got {type(text).__name__}")
    word, sep, rest = text.partition(" ")
    if word != "throw" or not sep or not rest:
        raise NotationError(f"expected 'throw <face>,<face>,...', got {text!r}")
    faces = tuple(parse_face(part) for part in rest.split(","))
    if list(faces) != sorted(faces):
        raise NotationError(f"faces of {text!r} must be in the order {', '.join(FACES)}")
    return faces


def parse_lounger(text: str) -> Lounger:
    """The lounger named ``text`` (``green-4a``, ``purple-3``, ``five-1``)."""
    lounger = LOUNGER_BY_NAME.get(text) if isinstance(text, str) else None
    if lounger is None:
        raise NotationError(f"unknown lounger {text!r} (e.g. green-4a, purple-3, five-1)")
    return lounger


def parse_track(text: str) -> int:
    """The lifeguard position named ``text`` (``-1`` for ``diving-board``)."""
    if not isinstance(text, str):
        raise NotationError(f"a track field must be text, got {type(text).__name__}")
    try:
        return TRACK_NAMES.index(text) - 1
    except ValueError:
        raise NotationError(f"unknown track field {text!r}") from None
