"""The board of Cool am Pool as data: faces, colours, loungers and the lifeguard's track.

Everything that describes the physical game lives here and nowhere else (rules R1-R6), so a
corrected board is a one-file change.  The layout of the loungers and the lifeguard's track are a
documented reconstruction (see ``docs/rules.md``, whose board tables and ``docs/board.svg``
are generated from this module).

Identifiers are small integers so that the rules can index lists:

* faces ``0..4`` are the colours in the order of :data:`COLOURS`, face ``5`` is the lifeguard;
* loungers ``0..23`` are the regular loungers, row by row from the pool (value 4, 3, 2) and left
  to right within a row; ``24`` and ``25`` are the two five-loungers;
* track position ``-1`` is the diving board, ``0..10`` the loop fields in clockwise order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# R1, R2: six-sided dice with five colour faces and one lifeguard face.
COLOURS: Final = ("green", "purple", "yellow", "red", "blue")
N_COLOURS: Final = len(COLOURS)
LIFEGUARD: Final = 5
FACES: Final = (*COLOURS, "lifeguard")
N_FACES: Final = len(FACES)
N_DICE: Final = 6

# R4, R5: per-player material and the chips ("water balls").
TOWELS_PER_PLAYER: Final = 16
FIGURES_PER_PLAYER: Final = 5
CHIPS_TOTAL: Final = 16
CHIPS_MAX_HELD: Final = 4
CHIPS_PER_INVASION: Final = 2

# R7, R25, R26: table sizes and the end of the game.
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4
END_UNOCCUPIED: Final = 4
ROUND_CAP: Final = 100

# R3: the colour zones, left to right, as (colour id, width).
COLOUR_ZONES: Final = ((0, 2), (1, 1), (2, 2), (3, 1), (4, 2))
ROW_VALUES: Final = (4, 3, 2)  # nearest the pool first
FIVE_VALUE: Final = 5


@dataclass(frozen=True, slots=True)
class Lounger:
    """One lounger: a stable id, its canonical name, its colour (``None`` for a five) and value."""

    id: int
    name: str
    colour: int | None
    value: int

    @property
    def is_five(self) -> bool:
        """True for the two five-loungers at the pool (R3)."""
        return self.colour is None


def _build_loungers() -> tuple[Lounger, ...]:
    loungers: list[Lounger] = []
    for value in ROW_VALUES:
        for colour, width in COLOUR_ZONES:
            for k in range(width):
                suffix = "ab"[k] if width == 2 else ""
                name = f"{COLOURS[colour]}-{value}{suffix}"
                loungers.append(Lounger(len(loungers), name, colour, value))
    for k in (1, 2):
        loungers.append(Lounger(len(loungers), f"five-{k}", None, FIVE_VALUE))
    return tuple(loungers)


LOUNGERS: Final = _build_loungers()
N_LOUNGERS: Final = len(LOUNGERS)  # 26
REGULAR: Final = tuple(lo.id for lo in LOUNGERS if not lo.is_five)  # 24 ids
FIVES: Final = tuple(lo.id for lo in LOUNGERS if lo.is_five)  # 2 ids
LOUNGER_BY_NAME: Final = {lo.name: lo for lo in LOUNGERS}
LOUNGER_COLOUR: Final = tuple(-1 if lo.colour is None else lo.colour for lo in LOUNGERS)
LOUNGER_VALUE: Final = tuple(lo.value for lo in LOUNGERS)


@dataclass(frozen=True, slots=True)
class TrackField:
    """A field of the lifeguard's loop (R6): it blocks one row value or one colour."""

    index: int
    name: str
    row: int | None
    colour: int | None


# R6: the loop, clockwise; the diving board (-1) is not part of it.
DIVING_BOARD: Final = -1
DIVING_BOARD_NAME: Final = "diving-board"
TRACK: Final = (
    TrackField(0, "row4-right", 4, None),
    TrackField(1, "row3-right", 3, None),
    TrackField(2, "row2-right", 2, None),
    TrackField(3, "blue", None, 4),
    TrackField(4, "red", None, 3),
    TrackField(5, "yellow", None, 2),
    TrackField(6, "purple", None, 1),
    TrackField(7, "green", None, 0),
    TrackField(8, "row2-left", 2, None),
    TrackField(9, "row3-left", 3, None),
    TrackField(10, "row4-left", 4, None),
)
TRACK_LEN: Final = len(TRACK)
TRACK_NAMES: Final = (DIVING_BOARD_NAME, *(f.name for f in TRACK))  # index = position + 1


def track_name(position: int) -> str:
    """The canonical name of a lifeguard position (``-1`` is the diving board)."""
    return TRACK_NAMES[position + 1]


def advance(position: int, steps: int) -> int:
    """Where the lifeguard stands after ``steps`` clockwise steps from ``position`` (R15).

    The first step from the diving board goes to the first loop field (R6).
    """
    if steps <= 0:
        return position
    if position == DIVING_BOARD:
        return (steps - 1) % TRACK_LEN
    return (position + steps) % TRACK_LEN


def _blocked(position: int) -> frozenset[int]:
    if position == DIVING_BOARD:
        return frozenset()
    field = TRACK[position]
    return frozenset(
        lo.id
        for lo in LOUNGERS
        if not lo.is_five and ((field.row is not None and lo.value == field.row) or lo.colour == field.colour)
    )


# BLOCKED[position + 1] is the set of lounger ids the lifeguard blocks from there (R6, R15).
BLOCKED: Final = tuple(_blocked(p) for p in range(DIVING_BOARD, TRACK_LEN))


def blocked_by(position: int) -> frozenset[int]:
    """The regular loungers blocked while the lifeguard stands on ``position`` (R6)."""
    return BLOCKED[position + 1]
