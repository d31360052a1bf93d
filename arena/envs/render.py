"""Pictures of a state for the environments: text, SVG, and an RGB array (numpy).

One scene of plain rectangles is built from the state (:func:`scene`) and drawn two ways: as SVG
text (:func:`svg`, with labels) and by a tiny rasteriser into an ``(H, W, 3)`` uint8 array
(:func:`rgb_array`), so both pictures always agree.  No drawing library is needed.

What the picture shows: the pool strip at the top with the two five-loungers; the 24 regular
loungers in three rows (values 4, 3, 2) tinted by colour, darkened where the lifeguard blocks; a
towel as a seat-coloured frame (plain) or a filled block (secured, guest side up); a figure as a
small seat-coloured square in the corner; below, the lifeguard's track (diving board and the 11
loop fields, his field marked), the dice (kept, then the last throw or the result) and one score
bar per seat.
"""

from __future__ import annotations

from html import escape
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from arena.engine import LOUNGERS, State, render, scores
from arena.engine.board import BLOCKED, FACES, TRACK_NAMES
from arena.engine.notation import faces_of

from .observation import SCORE_SCALE

RGB = tuple[int, int, int]

COLOUR_RGB: Final[tuple[RGB, ...]] = (
    (76, 175, 80),  # green
    (156, 39, 176),  # purple
    (255, 215, 64),  # yellow
    (229, 57, 53),  # red
    (30, 136, 229),  # blue
)
FACE_RGB: Final[tuple[RGB, ...]] = (*COLOUR_RGB, (250, 250, 250))
SEAT_RGB: Final[tuple[RGB, ...]] = ((20, 20, 20), (255, 255, 255), (255, 140, 0), (0, 188, 212))
BACKGROUND: Final[RGB] = (236, 232, 220)
POOL: Final[RGB] = (129, 212, 250)
FIVE_RGB: Final[RGB] = (255, 250, 240)
BLOCK_SHADE: Final = 0.45

CELL_W, CELL_H, GAP, MARGIN = 44, 34, 4, 8
WIDTH: Final = 2 * MARGIN + 8 * CELL_W + 7 * GAP
POOL_H: Final = CELL_H + 2 * GAP
TRACK_Y: Final = MARGIN + POOL_H + GAP + 3 * (CELL_H + GAP) + GAP
DICE_Y: Final = TRACK_Y + 22
BARS_Y: Final = DICE_Y + 28
HEIGHT: Final = BARS_Y + 4 * 10 + MARGIN


class Rect(NamedTuple):
    """A filled rectangle (pixels), optionally with a frame of ``stroke`` pixels in ``edge``."""

    x: int
    y: int
    w: int
    h: int
    fill: RGB | None
    edge: RGB | None = None
    stroke: int = 0
    label: str = ""  # SVG tooltip


def _shade(c: RGB, f: float) -> RGB:
    return (int(c[0] * f), int(c[1] * f), int(c[2] * f))


def _tint(c: RGB) -> RGB:
    return (int(c[0] * 0.5 + 127), int(c[1] * 0.5 + 127), int(c[2] * 0.5 + 127))


def _lounger_rects(state: State, i: int, x: int, y: int, base: RGB) -> list[Rect]:
    lo = LOUNGERS[i]
    out = [Rect(x, y, CELL_W, CELL_H, base, (90, 90, 90), 1, lo.name)]
    owner, fig = state.towel[i], state.figure[i]
    if owner >= 0:
        inner = Rect(x + 5, y + 5, CELL_W - 10, CELL_H - 10, None, SEAT_RGB[owner], 4)
        if state.secured[i]:
            inner = inner._replace(fill=SEAT_RGB[owner], edge=(60, 60, 60), stroke=1)
        out.append(inner)
    if fig >= 0:
        label = f"figure of seat {fig}"
        out.append(Rect(x + CELL_W - 14, y + 2, 12, 12, SEAT_RGB[fig], (60, 60, 60), 1, label))
    return out


def scene(state: State) -> list[Rect]:
    """The rectangles of the picture of ``state``, back to front."""
    rects = [Rect(0, 0, WIDTH, HEIGHT, BACKGROUND)]
    rects.append(Rect(MARGIN, MARGIN, WIDTH - 2 * MARGIN, POOL_H, POOL))
    blocked = BLOCKED[state.guard + 1]
    fives = [lo.id for lo in LOUNGERS if lo.is_five]
    for k, i in enumerate(fives):
        x = MARGIN + (3 + k) * (CELL_W + GAP) - GAP // 2 + (k * GAP)
        rects += _lounger_rects(state, i, x, MARGIN + GAP, FIVE_RGB)
    for i, lo in enumerate(LOUNGERS):
        if lo.is_five:
            continue
        row, col = divmod(i, 8)
        x = MARGIN + col * (CELL_W + GAP)
        y = MARGIN + POOL_H + GAP + row * (CELL_H + GAP)
        base = _tint(COLOUR_RGB[lo.colour if lo.colour is not None else 0])
        if i in blocked:
            base = _shade(base, BLOCK_SHADE)
        rects += _lounger_rects(state, i, x, y, base)
    # The lifeguard's track: the diving board, then the 11 loop fields.
    step = (WIDTH - 2 * MARGIN) // len(TRACK_NAMES)
    for k, name in enumerate(TRACK_NAMES):
        here = k == state.guard + 1
        fill = (183, 28, 28) if here else (200, 200, 200)
        rects.append(Rect(MARGIN + k * step, TRACK_Y, step - 2, 14, fill, (90, 90, 90), 1, name))
    # The dice: kept, then the last throw (roll phase) or the result (action phase).
    shown = [("kept", f) for f in faces_of(state.kept)]
    if state.phase.label == "roll":
        shown += [("thrown", f) for f in faces_of(state.last)]
    elif state.phase.label == "action":
        shown = [("result", f) for f in faces_of(state.result)]
    for k, (what, face) in enumerate(shown[:12]):
        edge = (0, 0, 0) if what == "kept" else (120, 120, 120)
        rects.append(Rect(MARGIN + k * 24, DICE_Y, 20, 20, FACE_RGB[face], edge, 2, f"{what} {FACES[face]}"))
    pts = scores(state)
    for seat in range(state.players):
        y = BARS_Y + seat * 10
        length = int((WIDTH - 2 * MARGIN) * min(pts[seat] / SCORE_SCALE, 1.0))
        rects.append(Rect(MARGIN, y, WIDTH - 2 * MARGIN, 8, (210, 210, 210)))
        if length:
            label = f"seat {seat}: {pts[seat]}"
            rects.append(Rect(MARGIN, y, length, 8, SEAT_RGB[seat], (60, 60, 60), 1, label))
    return rects


def rgb_array(state: State) -> npt.NDArray[np.uint8]:
    """The picture of ``state`` as an ``(HEIGHT, WIDTH, 3)`` uint8 array."""
    img = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    for r in scene(state):
        x0, y0, x1, y1 = max(r.x, 0), max(r.y, 0), min(r.x + r.w, WIDTH), min(r.y + r.h, HEIGHT)
        if x0 >= x1 or y0 >= y1:
            continue
        if r.fill is not None:
            img[y0:y1, x0:x1] = r.fill
        if r.edge is not None and r.stroke > 0:
            s = r.stroke
            img[y0 : y0 + s, x0:x1] = r.edge
            img[y1 - s : y1, x0:x1] = r.edge
            img[y0:y1, x0 : x0 + s] = r.edge
            img[y0:y1, x1 - s : x1] = r.edge
    return img


def _css(c: RGB | None) -> str:
    return "none" if c is None else f"rgb({c[0]},{c[1]},{c[2]})"


def svg(state: State) -> str:
    """The picture of ``state`` as an SVG document (the same rectangles, with tooltips)."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}">'
    ]
    for r in scene(state):
        inset = r.stroke / 2
        attrs = (
            f'x="{r.x + inset:g}" y="{r.y + inset:g}" width="{r.w - r.stroke:g}" height="{r.h - r.stroke:g}" '
            f'fill="{_css(r.fill)}"'
        )
        if r.edge is not None and r.stroke:
            attrs += f' stroke="{_css(r.edge)}" stroke-width="{r.stroke}"'
        title = f"<title>{escape(r.label)}</title>" if r.label else ""
        parts.append(f"<rect {attrs}>{title}</rect>" if title else f"<rect {attrs}/>")
    parts.append("</svg>")
    return "\n".join(parts)


def ansi(state: State) -> str:
    """The engine's text board (no colour codes)."""
    return render(state, color=False)
