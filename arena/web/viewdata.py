"""What the replay viewer shows, computed with the engine: every state of a replay as JSON.

The viewer never applies a rule itself: each state is :func:`arena.engine.to_snapshot` of the
engine's state after that event, plus two lists the engine also computes (the loungers the
lifeguard blocks there and the loungers the rolling result reaches).  The same payload serves the
web page, ``/api/matches/{id}/replay``, ``arena replays export --format json`` and the
self-contained HTML export.

Two rules keep what the page shows exact (format version 2):

* 64-bit integers (the seeds) are sent as decimal **strings**: JavaScript numbers are doubles
  and would print ``8146625516662860959`` as ``8146625516662861000``;
* times are sent preformatted (``ms_text`` beside ``ms``, see :func:`format_ms`), so the page and
  the tests show the same digits: the page never rounds a number itself.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Final

from arena.engine import COLOURS, FACES, LOUNGERS, Rules, State, parse_action, reachable, replay, to_snapshot
from arena.engine.board import (
    CHIPS_TOTAL,
    COLOUR_ZONES,
    FIGURES_PER_PLAYER,
    ROW_VALUES,
    TOWELS_PER_PLAYER,
    TRACK,
    TRACK_NAMES,
    blocked_by,
)
from arena.engine.errors import NotationError

FORMAT: Final = "pool-arena-replay-view"
FORMAT_VERSION: Final = 2
# Decision fields holding milliseconds; each gets a "<field>_text" twin formatted by format_ms.
MS_FIELDS: Final = ("ms", "cpu_ms", "away_ms")


def format_ms(value: float | int) -> str:
    """Milliseconds with one decimal, rounded half **up** from the number as recorded
    (``1.25`` -> ``"1.3"``, ``0.05`` -> ``"0.1"``, ``2`` -> ``"2.0"``).

    The one rounding rule of the viewer: Python's ``f"{x:.1f}"`` rounds the binary double (1.25
    gives ``"1.2"``) and JavaScript's ``toFixed(1)`` differs again, so neither is used.
    Any finite double is formatted (its digits all kept: 1e27 and beyond overflowed Decimal's
    default 28-digit context); NaN, an infinity or an int too large for a double raise.
    """
    exact = Decimal(repr(float(value)))
    return str(exact.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP, context=_WIDE))


_WIDE: Final = Context(prec=330, Emax=400, Emin=-400)
"""Room for every finite double with one decimal (the largest has 309 digits before the point)."""


def _ms_text(value: Any) -> str | None:
    """:func:`format_ms` of a recorded time; None for what is not a number a double holds finitely
    (a record is JSON: it may hold true, NaN, Infinity or a 400-digit integer)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return format_ms(number) if math.isfinite(number) else None


SECRET_SEED = "(secret while the game is on)"
"""What the viewer's header shows for the seed of a game still being played (it tells the dice)."""


def exact_ints(data: dict[str, Any], keys: tuple[str, ...] = ("seed",)) -> dict[str, Any]:
    """``data`` with the integer values of ``keys`` as decimal strings (exact in JavaScript)."""
    return {
        k: str(v) if k in keys and isinstance(v, int) and not isinstance(v, bool) else v
        for k, v in data.items()
    }


def board_data() -> dict[str, Any]:
    """The static board, from the engine's board data (the viewer draws what this says)."""
    return {
        "colours": list(COLOURS),
        "faces": list(FACES),
        "zones": [{"colour": COLOURS[c], "width": w} for c, w in COLOUR_ZONES],
        "rows": list(ROW_VALUES),
        "loungers": [
            {
                "id": lo.id,
                "name": lo.name,
                "colour": None if lo.colour is None else COLOURS[lo.colour],
                "value": lo.value,
            }
            for lo in LOUNGERS
        ],
        "track": [{"name": TRACK_NAMES[0], "row": None, "colour": None}]
        + [
            {"name": f.name, "row": f.row, "colour": None if f.colour is None else COLOURS[f.colour]}
            for f in TRACK
        ],
        "towels": TOWELS_PER_PLAYER,
        "figures": FIGURES_PER_PLAYER,
        "chips": CHIPS_TOTAL,
    }


def state_view(state: State) -> dict[str, Any]:
    """The engine's snapshot of ``state`` plus the blocked and reachable loungers (by name)."""
    snap = to_snapshot(state)
    snap["blocked"] = [LOUNGERS[i].name for i in sorted(blocked_by(state.guard))]
    snap["reachable"] = [LOUNGERS[i].name for i in reachable(state)]
    return snap


def _event_view(index: int, event: dict[str, Any], before: State) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, **event}
    if "throw" in event:
        out["kind"] = "throw"
        out["seat"] = before.seat
        out["faces"] = str(event["throw"]).removeprefix("throw ").split(",")
        return out
    out["kind"] = "decision"
    out["phase"] = before.phase.label
    for key in MS_FIELDS:
        text = _ms_text(event.get(key))
        if text is not None:
            out[f"{key}_text"] = text
    try:
        action = parse_action(str(event.get("action")))
    except NotationError:
        return out
    if action.lounger >= 0:
        out["lounger"] = LOUNGERS[action.lounger].name
    out["verb"] = str(action).split(" ")[0]
    return out


def seating(header: dict[str, Any], players: int) -> list[str]:
    """Bot names by seat from the replay header (``seat N`` where it has none)."""
    names = header.get("seating")
    if isinstance(names, list) and len(names) == players:
        return [str(n) for n in names]
    return [f"seat {k}" for k in range(players)]


def rules_data(rules: Rules) -> dict[str, Any]:
    """The rules the replay was played under (its header's version): the viewer shows the variant
    and reads the end threshold (R25) from here, never from a constant of its own."""
    return {
        "version": rules.version,
        "variant": rules.variant,
        "end_unoccupied": rules.end_unoccupied,
        "round_cap": rules.round_cap,
        "summary": rules.summary,
    }


def build_view(text: str, match: dict[str, Any] | None = None) -> dict[str, Any]:
    """Replay ``text`` through the engine and return the viewer's data.

    Raises :class:`arena.engine.ReplayError` (line and reason) for a record that does not replay.
    Seeds in ``header`` and ``match`` are strings (see the module's docstring).
    """
    rep = replay(text)
    players = rep.states[0].players
    events = [_event_view(k, e, rep.states[k - 1]) for k, e in enumerate(rep.events, start=1)]
    forfeits = rep.result.get("forfeits", [])
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "match": None if match is None else exact_ints(match),
        "header": exact_ints(rep.header),
        "players": players,
        "seating": seating(rep.header, players),
        "rules": rules_data(rep.rules),
        "board": board_data(),
        "states": [state_view(s) for s in rep.states],
        "events": events,
        "result": rep.result,
        "forfeits": forfeits if isinstance(forfeits, list) else [],
    }
