"""What a bot printed on stderr is its owner's business: the public views of a match leave it out.

A crash's forfeit carries the tail of the bot's stderr as evidence (``evidence.stderr_tail``) and
its detail ends with the bot's last error line (``the process exited with status 1 before
connecting: <line>``, arena/referee/crashinfo.py).  The stored replay keeps both (the record stays
exact); only the views filter them.

``arena web`` (the operator's own read-only viewer, no accounts) shows everything.  ``arena serve``
sets ``app.state.stderr_viewer``: a function of the request that answers who may see which
bot's stderr (its owner or an admin); everybody else gets the views without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fastapi import Request

from arena.referee.crashinfo import CRASHED, public_detail, public_forfeit
from arena.web.queries import MatchRow, SeatRow

Keep = Callable[[str], bool]  # bot name -> whether the viewer may see that bot's stderr


def viewer_keep(request: Request) -> Keep | None:
    """The request's filter; None when everything may be shown (``arena web``)."""
    make: Callable[[Request], Keep | None] | None = getattr(request.app.state, "stderr_viewer", None)
    return None if make is None else make(request)


def public_reason(reason: str | None) -> str | None:
    """An upload's rejection reason (``crashed: <detail>``) without the bot's stderr line."""
    if reason is None or not reason.startswith(CRASHED + ": "):
        return reason
    return CRASHED + ": " + (public_detail(CRASHED, reason[len(CRASHED) + 2 :]) or "")


def public_row(m: MatchRow, keep: Keep | None) -> MatchRow:
    """``m`` with the crash details of the seats ``keep`` refuses cut (``keep`` None: ``m``)."""
    if keep is None or not any(s.termination == CRASHED for s in m.seats):
        return m
    seats: list[SeatRow] = [
        s if keep(s.bot) else replace(s, detail=public_detail(s.termination, s.detail)) for s in m.seats
    ]
    return replace(m, seats=seats)


def _public_forfeits(forfeits: Any, hidden: Callable[[Any], bool]) -> Any:
    if not isinstance(forfeits, list):
        return forfeits
    return [public_forfeit(f) if isinstance(f, dict) and hidden(f.get("seat")) else f for f in forfeits]


def _hidden(m: MatchRow, keep: Keep) -> Callable[[Any], bool]:
    names = {s.seat: s.bot for s in m.seats}
    return lambda seat: not (isinstance(seat, int) and seat in names and keep(names[seat]))


def public_view(view: dict[str, Any], m: MatchRow, keep: Keep | None) -> dict[str, Any]:
    """The viewer data of match ``m`` without the stderr of the seats ``keep`` refuses.

    A shallow copy: the (cached) ``view`` itself is never changed.
    """
    if keep is None:
        return view
    hidden = _hidden(m, keep)
    out = dict(view)
    out["forfeits"] = _public_forfeits(view.get("forfeits"), hidden)
    result = view.get("result")
    if isinstance(result, dict) and "forfeits" in result:
        out["result"] = {**result, "forfeits": _public_forfeits(result["forfeits"], hidden)}
    match = view.get("match")
    if isinstance(match, dict) and isinstance(match.get("seats"), list):
        out["match"] = {**match, "seats": [_public_seat(s, hidden) for s in match["seats"]]}
    return out


def _public_seat(seat: Any, hidden: Callable[[Any], bool]) -> Any:
    if not isinstance(seat, dict) or not hidden(seat.get("seat")):
        return seat
    return {**seat, "detail": public_detail(seat.get("termination"), seat.get("detail"))}


def public_jsonl(text: str, m: MatchRow, keep: Keep | None) -> str:
    """The stored record (JSON Lines) without the stderr of the seats ``keep`` refuses: only the
    lines that carry forfeits are rewritten, every other line is sent as stored."""
    if keep is None:
        return text
    hidden = _hidden(m, keep)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if '"forfeits"' not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            lines[i] = json.dumps(_strip(obj, hidden), separators=(",", ":"))
    return "\n".join(lines)


def _strip(obj: Any, hidden: Callable[[Any], bool]) -> Any:
    """Every ``forfeits`` list inside ``obj`` made public (for the hidden seats)."""
    if isinstance(obj, dict):
        return {
            k: _public_forfeits(v, hidden) if k == "forfeits" else _strip(v, hidden) for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_strip(v, hidden) for v in obj]
    return obj
