"""The generated parts of ``docs/rules.md`` and the board diagram ``docs/board.svg``.

Everything here is computed from :mod:`arena.engine.board` (the one source of truth for the
board) and :mod:`arena.engine.chance` (the dice stream), so the documentation cannot drift from
the engine: ``scripts/rules_tables.py`` rewrites the generated blocks of ``docs/rules.md``,
``scripts/board_svg.py`` rewrites ``docs/board.svg``, and ``tests/docs`` fail when either
committed file differs from what these functions produce.

A generated block in a Markdown file is delimited by two HTML comments::

    <!-- generated: NAME (...) -->
    ...
    <!-- end generated: NAME -->
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final
from xml.sax.saxutils import escape

from arena.engine.board import (
    COLOUR_ZONES,
    COLOURS,
    DIVING_BOARD_NAME,
    FACES,
    LOUNGERS,
    ROW_VALUES,
    TRACK,
    Lounger,
    blocked_by,
)
from arena.engine.chance import stream_faces

REPO: Final = Path(__file__).resolve().parents[1]
RULES_MD: Final = REPO / "docs" / "rules.md"
BOARD_SVG: Final = REPO / "docs" / "board.svg"

# Display colours of the five lounger colours (cosmetic; the same as the replay viewer's).
INK: Final = {
    "green": "#2f9e44",
    "purple": "#9c36b5",
    "yellow": "#f5c000",
    "red": "#e03131",
    "blue": "#1c7ed6",
}
PALE: Final = {
    "green": "#d3f9d8",
    "purple": "#f3d9fa",
    "yellow": "#fff3bf",
    "red": "#ffe3e3",
    "blue": "#d0ebff",
}

# (seed, turn, throw) triples whose stream faces docs/rules.md §5 lists as test vectors.
STREAM_VECTORS: Final = (
    (0, 1, 1),
    (0, 1, 2),
    (0, 2, 1),
    (1, 1, 1),
    (42, 7, 3),
    (8146625516662860959, 1, 1),
    (2**63 - 1, 100, 9),
)


class GeneratedBlockError(ValueError):
    """A Markdown file lacks a generated block's markers, or has them out of order."""


# ----------------------------------------------------------------------------- where things are


def _columns() -> dict[int, int]:
    """Lounger id -> column (1..8, left to right) for the regular loungers."""
    out: dict[int, int] = {}
    for lo in LOUNGERS:
        if lo.is_five:
            continue
        col = 1
        for colour, width in COLOUR_ZONES:
            if colour == lo.colour:
                col += 1 if lo.name.endswith("b") else 0
                break
            col += width
        out[lo.id] = col
    return out


def _where(lo: Lounger, columns: dict[int, int]) -> str:
    if lo.is_five:
        return "at the pool, " + ("left" if lo.name.endswith("1") else "right")
    near = " (nearest the pool)" if lo.value == ROW_VALUES[0] else ""
    far = " (farthest from the pool)" if lo.value == ROW_VALUES[-1] else ""
    return f"row {lo.value}{near}{far}, column {columns[lo.id]}"


def _colour_name(lo: Lounger) -> str:
    return "none (a five-lounger)" if lo.colour is None else COLOURS[lo.colour]


# ----------------------------------------------------------------------------- Markdown tables


def colours_table() -> str:
    """The six die faces with their ids (R1, R2)."""
    lines = ["| face id | name | what it is |", "|---:|---|---|"]
    for i, name in enumerate(FACES):
        what = "the lifeguard face" if i == len(COLOURS) else f"colour {i}"
        lines.append(f"| {i} | `{name}` | {what} |")
    return "\n".join(lines)


def loungers_table() -> str:
    """Every lounger: id, canonical name, colour, value and place on the board (R3)."""
    columns = _columns()
    lines = ["| id | name | colour | value | where |", "|---:|---|---|---:|---|"]
    for lo in LOUNGERS:
        lines.append(f"| {lo.id} | `{lo.name}` | {_colour_name(lo)} | {lo.value} | {_where(lo, columns)} |")
    return "\n".join(lines)


def _blocks(position: int) -> str:
    names = [LOUNGERS[i].name for i in sorted(blocked_by(position))]
    if not names:
        return "nothing"
    return f"{len(names)} loungers: " + ", ".join(f"`{n}`" for n in names)


def track_table() -> str:
    """The lifeguard's positions in walking order and the loungers each one blocks (R6)."""
    lines = ["| position | field | kind | blocks |", "|---:|---|---|---|"]
    lines.append(f"| -1 | `{DIVING_BOARD_NAME}` | start, not on the loop | nothing |")
    for f in TRACK:
        kind = f"row {f.row}" if f.row is not None else f"colour {COLOURS[f.colour or 0]}"
        lines.append(f"| {f.index} | `{f.name}` | {kind} | {_blocks(f.index)} |")
    return "\n".join(lines)


def board_grid() -> str:
    """The board as a fixed-width picture with every lounger id (for readers without the SVG)."""
    width = 13
    by_row: dict[int, list[Lounger]] = {v: [] for v in ROW_VALUES}
    for lo in LOUNGERS:
        if not lo.is_five:
            by_row[lo.value].append(lo)
    fives = [lo for lo in LOUNGERS if lo.is_five]
    total = 8 + width * len(by_row[ROW_VALUES[0]])
    lines = ["```text", "pool".center(total).rstrip()]
    five_text = "   ".join(f"{lo.id} {lo.name}" for lo in fives)
    lines.append(five_text.center(total).rstrip())
    zones = "".join(COLOURS[c].ljust(width * w) for c, w in COLOUR_ZONES)
    lines.append(" " * 8 + zones.rstrip())
    for value in ROW_VALUES:
        cells = "".join(f"{lo.id} {lo.name}".ljust(width) for lo in by_row[value])
        lines.append(f"row {value}:  {cells}".rstrip())
    lines.append("```")
    return "\n".join(lines)


def stream_vectors() -> str:
    """Test vectors of the dice stream: the six faces for a few (seed, turn, throw)."""
    lines = ["| seed | turn | throw | the six faces, in stream order |", "|---:|---:|---:|---|"]
    for seed, turn, throw in STREAM_VECTORS:
        faces = ", ".join(FACES[f] for f in stream_faces(seed, turn, throw))
        lines.append(f"| {seed} | {turn} | {throw} | {faces} |")
    return "\n".join(lines)


GENERATORS: Final[dict[str, Callable[[], str]]] = {
    "faces": colours_table,
    "board-grid": board_grid,
    "loungers": loungers_table,
    "track": track_table,
    "stream-vectors": stream_vectors,
}


def _block_re(name: str) -> re.Pattern[str]:
    return re.compile(
        r"(<!-- generated: "
        + re.escape(name)
        + r"\b[^>]*-->\n)(.*?)(<!-- end generated: "
        + re.escape(name)
        + r" -->)",
        re.DOTALL,
    )


def generated_blocks(text: str) -> dict[str, str]:
    """The current content of every generated block in ``text`` (name -> content)."""
    out: dict[str, str] = {}
    for name in GENERATORS:
        m = _block_re(name).search(text)
        if m is not None:
            out[name] = m.group(2).rstrip("\n")
    return out


def fill_blocks(text: str, names: Iterable[str] | None = None) -> str:
    """``text`` with every generated block (or those named) replaced by freshly generated content.

    Raises :class:`GeneratedBlockError` naming a block whose markers are missing.
    """
    for name in names if names is not None else GENERATORS:
        pattern = _block_re(name)
        if pattern.search(text) is None:
            raise GeneratedBlockError(
                f"no generated block {name!r}: add '<!-- generated: {name} -->' and "
                f"'<!-- end generated: {name} -->' lines where it belongs"
            )
        m = pattern.search(text)
        assert m is not None
        text = text[: m.start(2)] + GENERATORS[name]() + "\n" + text[m.end(2) :]
    return text


# ----------------------------------------------------------------------------- the SVG diagram

# Geometry (SVG user units).
_LW, _LH = 74, 96  # a lounger
_IN_GAP, _ZONE_GAP = 8, 22
_X0 = 200
_ROW_Y: Final = {4: 250, 3: 366, 2: 482}
_FIVE_Y, _FIVE_H = 132, 92
_LEFT_X, _RIGHT_X = 74, 966
_LOOP_TOP, _BOTTOM_Y = 232, 642
_POOL = (216, 18, 640, 96)  # x, y, w, h
_DIVE = (902, 52, 128, 28)  # x, y, w, h
_WIDTH, _HEIGHT = 1040, 760


def _zones() -> list[tuple[str, int, int]]:
    """(colour name, x, width) of each colour zone, left to right."""
    out = []
    x = _X0
    for i, (colour, width) in enumerate(COLOUR_ZONES):
        w = width * _LW + (width - 1) * _IN_GAP
        out.append((COLOURS[colour], x, w))
        x += w + (_ZONE_GAP if i < len(COLOUR_ZONES) - 1 else 0)
    return out


def _lounger_box(lo: Lounger, zones: list[tuple[str, int, int]]) -> tuple[int, int, int, int]:
    if lo.is_five:
        mid = _X0 + (zones[-1][1] + zones[-1][2] - _X0) // 2
        x = mid - _LW - 20 if lo.name.endswith("1") else mid + 20
        return x, _FIVE_Y, _LW, _FIVE_H
    assert lo.colour is not None
    _name, zx, _w = zones[lo.colour]
    k = 1 if lo.name.endswith("b") else 0
    return zx + k * (_LW + _IN_GAP), _ROW_Y[lo.value], _LW, _LH


def _field_centre(index: int, zones: list[tuple[str, int, int]]) -> tuple[int, int]:
    f = TRACK[index]
    if f.row is not None:
        y = _ROW_Y[f.row] + _LH // 2
        return (_LEFT_X if f.name.endswith("left") else _RIGHT_X), y
    assert f.colour is not None
    _name, zx, w = zones[f.colour]
    return zx + w // 2, _BOTTOM_Y


def _text(x: float, y: float, s: str, cls: str, anchor: str = "middle", fill: str | None = None) -> str:
    fill_attr = f' fill="{fill}"' if fill else ""
    return f'<text x="{x:g}" y="{y:g}" class="{cls}" text-anchor="{anchor}"{fill_attr}>{escape(s)}</text>'


def board_svg() -> str:
    """The board of ``arena.engine.board`` as a standalone SVG: the pool, the five-loungers, the
    24 regular loungers with id, name, colour and value, and the lifeguard's loop with every
    field's position and name, walked clockwise from the diving board."""
    zones = _zones()
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_HEIGHT}" '
        f'width="{_WIDTH}" height="{_HEIGHT}" role="img" aria-labelledby="board-title board-desc">',
        '<title id="board-title">The board of Cool am Pool with every lounger id</title>',
        '<desc id="board-desc">Generated from arena/engine/board.py by scripts/board_svg.py. '
        "Each lounger shows its id (large), its value (top band) and its name; each field of the "
        "lifeguard's loop shows its position and name.</desc>",
        "<style>",
        "text { font-family: 'DejaVu Sans', Verdana, sans-serif; }",
        ".id { font-size: 26px; font-weight: 700; fill: #212529; }",
        ".val { font-size: 14px; font-weight: 700; fill: #ffffff; }",
        ".name { font-size: 11px; fill: #343a40; }",
        ".fname { font-size: 12px; font-weight: 700; }",
        ".fpos { font-size: 11px; }",
        ".label { font-size: 13px; fill: #495057; }",
        ".pool { font-size: 22px; font-weight: 800; fill: #ffffff; letter-spacing: 4px; }",
        ".row { font-size: 13px; font-weight: 700; fill: #868e96; }",
        "</style>",
        f'<rect x="0" y="0" width="{_WIDTH}" height="{_HEIGHT}" rx="16" fill="#efe6d6"/>',
    ]
    px, py, pw, ph = _POOL
    out.append(
        f'<rect x="{px}" y="{py}" width="{pw}" height="{ph}" rx="22" fill="#4dabf7" stroke="#a5d8ff" '
        'stroke-width="6"/>'
    )
    out.append(_text(px + pw / 2, py + ph / 2 + 8, "POOL", "pool"))
    dx, dy, dw, dh = _DIVE
    out.append(
        f'<rect x="{dx}" y="{dy}" width="{dw}" height="{dh}" rx="6" fill="#f1f3f5" stroke="#868e96" '
        'stroke-width="2"/>'
    )
    out.append(_text(dx + dw / 2, dy + 18, f"-1 {DIVING_BOARD_NAME}", "fpos", fill="#212529"))
    out.append(_text(dx + dw, dy - 8, "the lifeguard starts here", "label", anchor="end"))
    # the loop, its way in from the diving board, and arrows showing the clockwise direction
    out.append(
        f'<rect x="{_LEFT_X}" y="{_LOOP_TOP}" width="{_RIGHT_X - _LEFT_X}" '
        f'height="{_BOTTOM_Y - _LOOP_TOP}" rx="28" fill="none" stroke="#adb5bd" stroke-width="3" '
        'stroke-dasharray="8 7"/>'
    )
    out.append(
        f'<line x1="{_RIGHT_X}" y1="{dy + dh}" x2="{_RIGHT_X}" y2="{_LOOP_TOP}" stroke="#adb5bd" '
        'stroke-width="3" stroke-dasharray="8 7"/>'
    )
    arrows = (
        (_RIGHT_X, (_ROW_Y[4] + _ROW_Y[3] + _LH) // 2, 90),
        (_RIGHT_X, (_ROW_Y[3] + _ROW_Y[2] + _LH) // 2, 90),
        (_RIGHT_X - 62, _BOTTOM_Y, 180),
        (_LEFT_X + 110, _BOTTOM_Y, 180),
        (_LEFT_X, (_ROW_Y[3] + _ROW_Y[2] + _LH) // 2, 270),
        (_LEFT_X, (_ROW_Y[4] + _ROW_Y[3] + _LH) // 2, 270),
        (_LEFT_X + 90, _LOOP_TOP, 0),
        (_RIGHT_X - 50, _LOOP_TOP, 0),
    )
    for ax, ay, rot in arrows:
        out.append(
            f'<path d="M -8 -8 L 8 0 L -8 8 Z" fill="#868e96" transform="translate({ax},{ay}) '
            f'rotate({rot})"/>'
        )
    out.append(_text(_X0 + 6, _LOOP_TOP - 10, "the lifeguard walks clockwise", "label", anchor="start"))
    # zone bands and row values
    for colour, zx, w in zones:
        out.append(
            f'<rect x="{zx}" y="{_ROW_Y[4] - 14}" width="{w}" height="6" rx="3" fill="{INK[colour]}"/>'
        )
    for value in ROW_VALUES:
        out.append(_text(_X0 - 12, _ROW_Y[value] + _LH / 2 + 5, f"row {value}", "row", anchor="end"))
    # loungers
    for lo in LOUNGERS:
        x, y, w, h = _lounger_box(lo, zones)
        stroke = "#0b7285" if lo.colour is None else INK[COLOURS[lo.colour]]
        fill = "#e3fafc" if lo.colour is None else PALE[COLOURS[lo.colour]]
        out.append(f'<g id="lounger-{lo.id}" data-name="{lo.name}">')
        out.append(
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="10" fill="{fill}" stroke="{stroke}" '
            'stroke-width="3"/>'
        )
        out.append(f'<rect x="{x + 3}" y="{y + 3}" width="{w - 6}" height="18" rx="7" fill="{stroke}"/>')
        out.append(_text(x + w / 2, y + 17, str(lo.value), "val"))
        out.append(_text(x + w / 2, y + h / 2 + 14, str(lo.id), "id"))
        out.append(_text(x + w / 2, y + h - 8, lo.name, "name"))
        out.append("</g>")
    # the track fields
    for f in TRACK:
        cx, cy = _field_centre(f.index, zones)
        if f.row is not None:
            w, fill, ink = 96, "#e9ecef", "#212529"
        else:
            assert f.colour is not None
            colour = COLOURS[f.colour]
            w, fill = 110, INK[colour]
            ink = "#212529" if colour == "yellow" else "#ffffff"
        out.append(f'<g id="field-{f.index}" data-name="{f.name}">')
        out.append(
            f'<rect x="{cx - w // 2}" y="{cy - 26}" width="{w}" height="52" rx="10" fill="{fill}" '
            'stroke="#868e96" stroke-width="2"/>'
        )
        out.append(_text(cx, cy - 6, str(f.index), "fpos", fill=ink))
        out.append(_text(cx, cy + 13, f.name, "fname", fill=ink))
        out.append("</g>")
    # the key
    key_y = _HEIGHT - 46
    out.append(
        _text(
            24,
            key_y,
            "Lounger: value in the top band, id in the middle, name at the bottom. "
            "A row field blocks every regular lounger of that value,",
            "label",
            anchor="start",
        )
    )
    out.append(
        _text(
            24,
            key_y + 20,
            "a colour field every regular lounger of that colour; the five-loungers "
            "(ids 24, 25) are never blocked.",
            "label",
            anchor="start",
        )
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"
