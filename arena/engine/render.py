"""A compact board for terminals, with optional ANSI colours, and its legend (:data:`LEGEND`).

Cell legend: ``1.`` plain towel of seat 1, ``1*`` seat 1's towel guest side up (secured),
``1.3`` seat 1's plain towel with a figure of seat 3, ``x`` marks a lounger the lifeguard blocks.
"""

from __future__ import annotations

from .board import (
    COLOUR_ZONES,
    COLOURS,
    FIVES,
    LOUNGERS,
    N_COLOURS,
    ROW_VALUES,
    TRACK_NAMES,
    blocked_by,
    track_name,
)
from .notation import format_counts
from .scoring import scores
from .state import Phase, State

_COLOUR_CODE = {0: "32", 1: "35", 2: "33", 3: "31", 4: "34"}
_SEAT_CODE = ("1;36", "1;91", "1;92", "1;93")
_CELL = 7  # characters per lounger cell
BOARD_WIDTH = 6 + _CELL * sum(width for _, width in COLOUR_ZONES)
"""Columns the lounger grid of :func:`render` needs (the longer lines may wrap, the grid may not)."""


LEGEND = """\
How to read the board
  green..blue  the loungers under their colour
  4 3 2        rows: a regular lounger's value (row 4 is nearest the pool)
  pool         the five-loungers five-1 and five-2: worth 5, never blocked
  -            an empty lounger
  0.           seat 0's towel, plain side up
  1*           seat 1's towel, guest side up: secured, it scores the value
  3.2          seat 3's plain towel carrying a guest figure of seat 2
  ...x         the lifeguard blocks it (his row or colour): 0.1x, 2. x, - x
  lifeguard    his track; [brackets] mark where he stands
  >seat N      the seat to act; score, towels and figures in supply, chips
  round ...    round, turn, phase, unoccupied loungers, chips in the pool
  kept         dice set aside this turn; "last throw" and "result" alike
The rules and every word used here: docs/rules.md"""


def legend() -> str:
    """:data:`LEGEND`: what every mark of :func:`render`'s board means."""
    return LEGEND


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _cell(state: State, i: int, color: bool) -> str:
    owner, fig = state.towel[i], state.figure[i]
    text = " -  " if owner < 0 else f" {owner}{'*' if state.secured[i] else '.'}{fig if fig >= 0 else ' '}"
    blocked = i in blocked_by(state.guard)
    text = (text + ("x" if blocked else "")).ljust(_CELL)
    if owner >= 0 and color:
        return _paint(text, _SEAT_CODE[owner] + (";7" if state.secured[i] else ""), True)
    return text


def render(state: State, *, color: bool = False) -> str:
    """A multi-line picture of ``state``: loungers by row and colour, fives, lifeguard, dice,
    supplies and scores."""
    lines: list[str] = []
    head = "      "
    for colour, width in COLOUR_ZONES:
        head += _paint(f"{COLOURS[colour]:<{_CELL * width}}", _COLOUR_CODE[colour], color)
    lines.append(head)
    for value in ROW_VALUES:
        row = [lo.id for lo in LOUNGERS if not lo.is_five and lo.value == value]
        lines.append(f"  {value}   " + "".join(_cell(state, i, color) for i in row))
    fives = "  ".join(f"{LOUNGERS[i].name}:{_cell(state, i, color).rstrip()}" for i in FIVES)
    lines.append(f"  pool  {fives}")
    track = " ".join(
        _paint(f"[{name}]", "1", color) if name == track_name(state.guard) else name for name in TRACK_NAMES
    )
    lines.append(f"  lifeguard: {track}")
    pts = scores(state)
    for seat in range(state.players):
        marker = ">" if seat == state.seat and state.phase != Phase.OVER else " "
        lines.append(
            f" {marker}"
            + _paint(f"seat {seat}", _SEAT_CODE[seat], color)
            + f"  score {pts[seat]:>2}  towels {state.towels[seat]:>2}  "
            f"figures {state.figures[seat]}  chips {state.chips[seat]}"
        )
    status = f"  round {state.round}  turn {state.turn}  phase {state.phase.label}"
    status += f"  unoccupied {state.unoccupied}  pool chips {state.pool}"
    if state.final_round:
        status += "  (final round)"
    if state.rules.variant != "standard":
        status += f"  rules {state.rules.variant}"
    if state.termination:
        status += f"  ended: {state.termination}"
    lines.append(status)
    if state.phase in (Phase.THROW, Phase.ROLL, Phase.ACTION):
        dice = f"  kept [{format_counts(state.kept)}]"
        if state.phase == Phase.ROLL:
            dice += f"  last throw [{format_counts(state.last)}]"
        if state.phase == Phase.ACTION:
            res = state.result
            dice += f"  result [{format_counts(res)}]"
            counts = ", ".join(f"{COLOURS[c]} {res[c]}" for c in range(N_COLOURS) if res[c])
            if counts:
                dice += f"  ({counts})"
        lines.append(dice)
    return "\n".join(lines)
