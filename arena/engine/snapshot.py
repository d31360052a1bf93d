"""A JSON-ready snapshot of a state, and the state back from a snapshot."""

from __future__ import annotations

from typing import Any

from .board import FACES, LOUNGERS, N_FACES, N_LOUNGERS, track_name
from .errors import EngineError
from .notation import parse_track
from .scoring import scores
from .state import Phase, State
from .variants import DEFAULT, UnknownRulesError, by_version


class SnapshotError(EngineError, ValueError):
    """A snapshot that does not describe a state."""


def _dice(counts: tuple[int, ...]) -> dict[str, int]:
    return {FACES[f]: counts[f] for f in range(N_FACES) if counts[f]}


def to_snapshot(state: State) -> dict[str, Any]:
    """Every field of ``state`` as plain JSON data with canonical names (rules.md §6); ``rules``
    is the rules version id (``"1"`` for the standard rules)."""
    return {
        "players": state.players,
        "phase": state.phase.label,
        "seat": state.seat,
        "round": state.round,
        "turn": state.turn,
        "throw_no": state.throw_no,
        "dice_to_throw": state.dice,
        "kept": _dice(state.kept),
        "last_throw": _dice(state.last),
        "result": _dice(state.result),
        "lifeguard": track_name(state.guard),
        "loungers": [
            {
                "name": lo.name,
                "towel": None if state.towel[i] < 0 else state.towel[i],
                "side": "guest" if state.secured[i] else "plain",
                "figure": None if state.figure[i] < 0 else state.figure[i],
            }
            for i, lo in enumerate(LOUNGERS)
        ],
        "towels": list(state.towels),
        "figures": list(state.figures),
        "chips": list(state.chips),
        "pool": state.pool,
        "scores": list(scores(state)),
        "unoccupied": state.unoccupied,
        "final_round": state.final_round,
        "termination": state.termination,
        "rules": state.rules.version,
    }


def _counts(d: dict[str, int]) -> tuple[int, ...]:
    return tuple(int(d.get(f, 0)) for f in FACES)


def from_snapshot(data: dict[str, Any]) -> State:
    """The state a snapshot describes; :class:`SnapshotError` if it is incomplete or wrong.

    A snapshot without ``rules`` (written before rules versions travelled in the state) means
    the standard rules."""
    try:
        s = State.__new__(State)
        s.players = int(data["players"])
        s.phase = Phase[str(data["phase"]).upper()]
        s.seat = int(data["seat"])
        s.round = int(data["round"])
        s.turn = int(data["turn"])
        s.throw_no = int(data["throw_no"])
        s.dice = int(data["dice_to_throw"])
        s.kept = _counts(data["kept"])
        s.last = _counts(data["last_throw"])
        s.result = _counts(data["result"])
        s.guard = parse_track(data["lifeguard"])
        loungers = data["loungers"]
        if len(loungers) != N_LOUNGERS:
            raise SnapshotError(f"expected {N_LOUNGERS} loungers, got {len(loungers)}")
        s.towel = tuple(-1 if lo["towel"] is None else int(lo["towel"]) for lo in loungers)
        s.secured = tuple(lo["side"] == "guest" for lo in loungers)
        s.figure = tuple(-1 if lo["figure"] is None else int(lo["figure"]) for lo in loungers)
        s.towels = tuple(int(x) for x in data["towels"])
        s.figures = tuple(int(x) for x in data["figures"])
        s.chips = tuple(int(x) for x in data["chips"])
        s.pool = int(data["pool"])
        s.occupied = sum(1 for i in range(N_LOUNGERS) if s.secured[i] or s.figure[i] >= 0)
        s.final_round = bool(data["final_round"])
        s.termination = data["termination"]
        s.rules = by_version(str(data["rules"])) if "rules" in data else DEFAULT
        s._legal = None
    except UnknownRulesError as exc:
        raise SnapshotError(str(exc)) from None
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"not a state snapshot: {exc!r}") from exc
    return s
