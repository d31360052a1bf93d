"""Charts as server-side SVG: no script, no CDN, readable at 400 px wide.

Each function takes plain data and returns one ``<svg>`` element (a string, safe to put in a
page: every text is escaped).  The drawing is 400 x 220 user units with ``width="100%"``, so a
chart fills its column and is exactly its design size on a 400-px phone; text is 11 units high
at least.  Every chart says what it shows in a ``<title>`` (for screen readers) and prints "no
data yet" when it has nothing to draw.

- :func:`rating_chart`: a rating over time with its uncertainty band (mu +- 2 sigma) and the
  conservative mu - 3 sigma the ladder ranks by;
- :func:`histogram`: a distribution (a bot's final scores);
- :func:`bar_chart`: labelled bars (results by seat, games per day);
- :func:`matrix_chart`: a head-to-head matrix (share of meetings the row finished ahead).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

W, H = 400, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 24, 34
FONT = 'font-family="system-ui, sans-serif" font-size="11"'
INK, MUTED, ACCENT, BAND, WARN = "#212529", "#6c757d", "#1971c2", "#a5d8ff", "#e8590c"


def _open(title: str, kind: str, height: int = H) -> list[str]:
    t = escape(title)
    return [
        f'<svg class="chart chart-{kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" '
        f'width="100%" style="max-width:{W * 2}px" role="img" aria-label="{t}" {FONT}>',
        f"<title>{t}</title>",
        f'<text x="{LEFT}" y="14" fill="{INK}" font-weight="600">{t}</text>',
    ]


def _empty(title: str, kind: str) -> str:
    out = _open(title, kind)
    out.append(f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="{MUTED}">no data yet</text></svg>')
    return "".join(out)


def _ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step) + 1)]


def _fmt(x: float) -> str:
    return f"{x:.0f}" if abs(x) >= 10 or x == int(x) else f"{x:.2f}".rstrip("0").rstrip(".")


class _Frame:
    """Maps data to the plot area; draws the axes."""

    def __init__(self, x0: float, x1: float, y0: float, y1: float, height: int = H) -> None:
        self.x0, self.x1 = x0, (x1 if x1 > x0 else x0 + 1)
        self.y0, self.y1 = y0, (y1 if y1 > y0 else y0 + 1)
        self.bottom = height - BOTTOM

    def x(self, v: float) -> float:
        return round(LEFT + (v - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT), 2)

    def y(self, v: float) -> float:
        return round(self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.bottom - TOP), 2)

    def axes(self, xlabel: str, ylabel: str, xticks: bool = True) -> list[str]:
        out = ['<g class="axes" stroke="#ced4da">',
               f'<line x1="{LEFT}" y1="{self.bottom}" x2="{W - RIGHT}" y2="{self.bottom}"/>',
               f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{self.bottom}"/></g>']  # fmt: skip
        for t in _ticks(self.y0, self.y1):
            y = self.y(t)
            out.append(f'<line x1="{LEFT}" y1="{y}" x2="{W - RIGHT}" y2="{y}" stroke="#f1f3f5"/>')
            out.append(f'<text x="{LEFT - 4}" y="{y + 4}" text-anchor="end" fill="{MUTED}">{_fmt(t)}</text>')
        if xticks:
            for t in _ticks(self.x0, self.x1):
                x = self.x(t)
                out.append(
                    f'<text x="{x}" y="{self.bottom + 13}" text-anchor="middle" '
                    f'fill="{MUTED}">{_fmt(t)}</text>'
                )
        out.append(
            f'<text x="{W - RIGHT}" y="{self.bottom + 27}" text-anchor="end" fill="{MUTED}">'
            f"{escape(xlabel)}</text>"
        )
        mid = (TOP + self.bottom) / 2
        out.append(
            f'<text x="11" y="{mid}" text-anchor="middle" fill="{MUTED}" transform="rotate(-90 11 {mid})">'
            f"{escape(ylabel)}</text>"
        )
        return out


def rating_chart(games: Sequence[int], mu: Sequence[float], sigma: Sequence[float], *, title: str) -> str:
    """``mu`` after each of a bot's games (``games[i]`` = its game count then) with the band
    ``mu +- 2 sigma`` and the conservative ``mu - 3 sigma`` (dashed)."""
    if not games:
        return _empty(title, "rating")
    lo = min(m - 3 * s for m, s in zip(mu, sigma, strict=True))
    hi = max(m + 2 * s for m, s in zip(mu, sigma, strict=True))
    f = _Frame(min(games), max(games), math.floor(lo), math.ceil(hi))
    out = _open(title, "rating")
    out += f.axes("games played", "OpenSkill")
    upper = [f"{f.x(g)},{f.y(m + 2 * s)}" for g, m, s in zip(games, mu, sigma, strict=True)]
    lower = [f"{f.x(g)},{f.y(m - 2 * s)}" for g, m, s in zip(games, mu, sigma, strict=True)]
    out.append(
        f'<polygon class="band" points="{" ".join(upper + lower[::-1])}" fill="{BAND}" opacity="0.6"/>'
    )
    cons = " ".join(f"{f.x(g)},{f.y(m - 3 * s)}" for g, m, s in zip(games, mu, sigma, strict=True))
    out.append(
        f'<polyline class="conservative" points="{cons}" fill="none" stroke="{WARN}" stroke-dasharray="4 3"/>'
    )
    line = " ".join(f"{f.x(g)},{f.y(m)}" for g, m in zip(games, mu, strict=True))
    out.append(f'<polyline class="mu" points="{line}" fill="none" stroke="{ACCENT}" stroke-width="2"/>')
    out.append(
        f'<text x="{W - RIGHT}" y="14" text-anchor="end" fill="{MUTED}">'
        f'<tspan fill="{ACCENT}">— mu</tspan> <tspan fill="#4dabf7">▮ ±2σ</tspan> '
        f'<tspan fill="{WARN}">- - mu−3σ</tspan></text>'
    )
    out.append("</svg>")
    return "".join(out)


def histogram(values: Sequence[float], *, title: str, xlabel: str, bins: int = 12) -> str:
    """How often each range of ``values`` occurred."""
    if not values:
        return _empty(title, "histogram")
    lo, hi = min(values), max(values)
    if hi == lo:
        hi = lo + 1
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    f = _Frame(lo, hi, 0, max(counts))
    out = _open(title, "histogram")
    out += f.axes(xlabel, "games")
    for i, c in enumerate(counts):
        x0, x1 = f.x(lo + i * width), f.x(lo + (i + 1) * width)
        y = f.y(c)
        out.append(
            f'<rect x="{x0 + 1}" y="{y}" width="{max(1.0, x1 - x0 - 2):.2f}" height="{f.bottom - y:.2f}" '
            f'fill="{ACCENT}"><title>{_fmt(lo + i * width)}–{_fmt(lo + (i + 1) * width)}: {c}</title></rect>'
        )
    out.append("</svg>")
    return "".join(out)


def bar_chart(labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str,
              notes: Sequence[str] | None = None, ymax: float | None = None) -> str:  # fmt: skip
    """One labelled bar per value (labels thinned out when there are many)."""
    if not labels:
        return _empty(title, "bars")
    top = ymax if ymax is not None else max(max(values), 1e-9)
    f = _Frame(0, len(labels), 0, top)
    out = _open(title, "bars")
    out += f.axes("", ylabel, xticks=False)
    every = max(1, math.ceil(len(labels) / 10))
    slot = (W - LEFT - RIGHT) / len(labels)
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        x, y = f.x(i), f.y(v)
        tip = escape(notes[i] if notes else f"{label}: {_fmt(v)}")
        out.append(
            f'<rect x="{x + slot * 0.1:.2f}" y="{y}" width="{slot * 0.8:.2f}" height="{f.bottom - y:.2f}" '
            f'fill="{ACCENT}"><title>{tip}</title></rect>'
        )
        if i % every == 0:
            out.append(
                f'<text x="{x + slot / 2:.2f}" y="{f.bottom + 13}" text-anchor="middle" fill="{MUTED}">'
                f"{escape(label)}</text>"
            )
    out.append("</svg>")
    return "".join(out)


def matrix_chart(names: Sequence[str], share: Sequence[Sequence[float | None]],
                 meetings: Sequence[Sequence[int]], *, title: str) -> str:  # fmt: skip
    """Row bot against column bot: the share of their meetings the row finished ahead (ties
    count a half), coloured from red (0) to blue (1); empty where they never met."""
    n = len(names)
    if n < 2:
        return _empty(title, "matrix")
    label_w = 92
    cell = min(34.0, (W - label_w - RIGHT) / n)
    height = int(TOP + 8 + cell * n + 60)
    out = _open(title, "matrix", height)
    y0 = TOP + 8
    for i, name in enumerate(names):
        y = y0 + i * cell
        out.append(
            f'<text x="{label_w - 4}" y="{y + cell / 2 + 4:.2f}" text-anchor="end" fill="{INK}">'
            f"{escape(name[:14])}</text>"
        )
        for j in range(n):
            x = label_w + j * cell
            v = share[i][j]
            if i == j or v is None:
                out.append(
                    f'<rect x="{x:.2f}" y="{y:.2f}" width="{cell - 1:.2f}" height="{cell - 1:.2f}" '
                    'fill="#f1f3f5"/>'
                )
                continue
            red, blue = (224, 49, 49), (25, 113, 194)
            rgb = tuple(round(a + (b - a) * v) for a, b in zip(red, blue, strict=True))
            out.append(
                f'<rect x="{x:.2f}" y="{y:.2f}" width="{cell - 1:.2f}" height="{cell - 1:.2f}" '
                f'fill="rgb{rgb}"><title>{escape(names[i])} ahead of {escape(names[j])} in '
                f"{v:.0%} of {meetings[i][j]} meetings</title></rect>"
            )
            if cell >= 24:
                out.append(
                    f'<text x="{x + cell / 2:.2f}" y="{y + cell / 2 + 4:.2f}" text-anchor="middle" '
                    f'fill="#fff" font-size="10">{round(v * 100)}</text>'
                )
    for j, name in enumerate(names):
        x = label_w + j * cell + cell / 2
        yb = y0 + n * cell + 6
        out.append(
            f'<text x="{x:.2f}" y="{yb:.2f}" fill="{INK}" transform="rotate(45 {x:.2f} {yb:.2f})">'
            f"{escape(name[:10])}</text>"
        )
    out.append(
        f'<text x="4" y="{height - 6}" fill="{MUTED}">'
        "colour and number: % of meetings the row finished ahead</text>"
    )
    out.append("</svg>")
    return "".join(out)
