"""Game records (rules.md §6): JSON Lines that replay exactly through the engine.

Writing: :class:`RecordWriter` collects the events of a game as it is played.  Reading:
:func:`replay` re-applies every event and returns every state; a record that does not replay
raises :class:`ReplayError` naming the line and the reason.

Extensions used by the referee (all optional, ignored where not understood): extra keys on any
line (e.g. ``"ms"`` think time on a decision, ``"away_ms"`` the time a remote bot's connection was
down during that decision, which ``"ms"`` does not include, ``"cpu_ms"`` its CPU time, ``"auto"``
for a decision the referee made for a seat that forfeited), and on the last line
``"forfeits": [{"seat": k, "reason": "..."}]`` with ``"termination": "forfeit"`` when a forfeit
ended the game early.  Forfeited seats share the last placing.

Rules versions: the header's ``"rules"`` names the rules version the game was played under;
:func:`replay` looks it up among every released version (:data:`arena.engine.variants.RELEASED`)
and replays under those rules, so records stay verifiable after the rules change or a variant
is added.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .actions import _TEXT_BY_ID, Action, parse_action
from .chance import SEED_LIMIT, stream_faces
from .errors import EngineError, IllegalActionError, IllegalThrowError, NotationError, ReplayError
from .notation import format_throw, parse_throw
from .rules import _STEPS_OF_LEGAL, apply, apply_throw, legal_actions
from .scoring import placings_with_forfeits, scores
from .state import State, Termination, new_game
from .variants import DEFAULT, Rules, UnknownRulesError, by_version

GAME: Final = "cool-am-pool"
#: The version id of the default (standard) rules; records name their own in the header.
RULES_VERSION: Final = DEFAULT.version
FORFEIT: Final = "forfeit"
TERMINATIONS: Final = (Termination.NORMAL, Termination.ROUND_CAP, FORFEIT)


# Characters that json.dumps(ensure_ascii=False) leaves raw but that must not appear raw in a line
# of JSON Lines: line separators str.splitlines() breaks at (NEL, LS, PS) and lone surrogates
# (not encodable as UTF-8).  They can only occur inside JSON strings, where \uXXXX means the same.
_UNSAFE: Final = re.compile("[\x85\u2028\u2029\ud800-\udfff]")


def _dumps(obj: Mapping[str, Any]) -> str:
    """One record line: JSON, readable non-ASCII text, never a raw line separator (a bot's text
    ends up in the record, e.g. its last message as forfeit evidence)."""
    text = json.dumps(obj, separators=(", ", ": "), ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _close(head: str, extra: Mapping[str, Any]) -> str:
    """``head`` (a JSON object's ASCII text without its closing brace) with the keys of ``extra``
    appended as :func:`_dumps` writes them, and closed."""
    return head + ", " + _dumps(extra)[1:] if extra else head + "}"


_DECISION_KEYS: Final = frozenset({"seat", "legal", "action", "forced"})
# id(legal tuple of a rolling decision) -> its JSON list.  Only the tuples of the rules' roll
# tables are remembered: they live forever, so their ids are never reused.
_LEGAL_JSON: dict[int, str] = {}


def _legal_json(legal: tuple[Action, ...]) -> str:
    """``json.dumps([str(a) for a in legal])`` with the record's separators (canonical texts are
    plain ASCII without quotes or backslashes, so no escaping is needed)."""
    key = id(legal)
    text = _LEGAL_JSON.get(key)
    if text is None:
        text = "[" + ", ".join([f'"{a}"' for a in legal]) + "]"
        if key in _STEPS_OF_LEGAL:
            _LEGAL_JSON[key] = text
    return text


class RecordWriter:
    """Builds a game record line by line while a game is played."""

    def __init__(self, players: int, seed: int, *, rules: Rules = DEFAULT, **header: Any) -> None:
        """Start a record of a game of ``players`` seats with dice seed ``seed``, played under
        ``rules`` (its version id goes in the header); ``header`` adds keys to the header line."""
        self.rules = rules
        self.lines: list[str] = [
            _dumps({"game": GAME, "rules": rules.version, "players": players, "seed": seed, **header})
        ]

    def throw(self, faces: Sequence[int], **extra: Any) -> None:
        """Record a throw (faces in any order; written in canonical order)."""
        if "throw" in extra:
            self.lines.append(_dumps({"throw": format_throw(faces), **extra}))
        else:  # the same text, without json.dumps of the canonical (ASCII) part
            self.lines.append(_close(f'{{"throw": "{format_throw(faces)}"', extra))

    def decision(self, before: State, action: Action, **extra: Any) -> None:
        """Record the decision ``action`` taken in state ``before``."""
        legal = legal_actions(before)
        seat = before.seat
        text = _TEXT_BY_ID.get(id(action))
        if text is not None and type(seat) is int and _DECISION_KEYS.isdisjoint(extra):
            # The text _dumps would write, built from canonical (ASCII) pieces: the legal list of
            # a rolling decision is encoded once per distinct throw.
            head = f'{{"seat": {seat}, "legal": {_legal_json(legal)}, "action": "{text}"'
            if len(legal) == 1:
                head += ', "forced": true'
            self.lines.append(_close(head, extra))
            return
        line: dict[str, Any] = {
            "seat": before.seat,
            "legal": [str(a) for a in legal],
            "action": str(action),
        }
        if len(legal) == 1:
            line["forced"] = True
        line.update(extra)
        self.lines.append(_dumps(line))

    def finish(
        self,
        final: State,
        forfeits: Sequence[Mapping[str, Any]] = (),
        **extra: Any,
    ) -> None:
        """Record the result line.  With forfeits the game may stop before it is over."""
        pts = scores(final)
        seats = [int(f["seat"]) for f in forfeits]
        if final.termination is not None:
            termination = final.termination
        elif forfeits:
            termination = FORFEIT
        else:
            raise ValueError("the game is not over and nobody forfeited")
        line: dict[str, Any] = {
            "scores": list(pts),
            "placings": list(placings_with_forfeits(pts, seats)),
            "termination": termination,
        }
        if forfeits:
            line["forfeits"] = [dict(f) for f in forfeits]
        line.update(extra)
        self.lines.append(_dumps(line))

    def text(self) -> str:
        """The whole record, one JSON object per line, ending with a newline."""
        return "\n".join(self.lines) + "\n"


@dataclass
class Replay:
    """A replayed record: its header, every state (``states[0]`` before the first event,
    ``states[k]`` after the event on line ``k + 1``), the events' JSON and the result line."""

    header: dict[str, Any]
    states: list[State] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def final(self) -> State:
        """The state after the last event."""
        return self.states[-1]

    @property
    def rules(self) -> Rules:
        """The rules the record was played (and replayed) under, named by its header."""
        return self.states[0].rules


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members as a dict; a key given twice is refused (which one counts is
    not defined by JSON, so a record that says two things is not replayed as either)."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _obj(line: str, n: int) -> dict[str, Any]:
    try:
        obj = json.loads(line, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise ReplayError(n, f"the key {exc.key[:40]!r} is given twice in one object") from None
    except json.JSONDecodeError as exc:
        # some messages end in "at" ("Unterminated string starting at"): one "at" before the column
        raise ReplayError(n, f"not JSON: {exc.msg.removesuffix(' at')} at column {exc.colno}") from None
    except RecursionError:  # a line nested about a thousand deep: no record is, and json gave up
        raise ReplayError(n, "not a record line: JSON nested too deeply") from None
    except ValueError:  # json refuses an integer of more than sys.get_int_max_str_digits() digits
        raise ReplayError(n, "not a record line: a number with thousands of digits") from None
    if not isinstance(obj, dict):
        raise ReplayError(n, "expected a JSON object")
    return obj


def _header(obj: dict[str, Any]) -> tuple[int, int, Rules]:
    if obj.get("game") != GAME:
        raise ReplayError(1, f"not a {GAME} record (game = {obj.get('game')!r})")
    version = obj.get("rules")
    if not isinstance(version, str):
        raise ReplayError(1, f"the header needs the rules version as text, got {version!r}")
    try:
        rules = by_version(version)
    except UnknownRulesError as exc:
        raise ReplayError(1, str(exc)) from None
    players, seed = obj.get("players"), obj.get("seed")
    if not isinstance(players, int) or isinstance(players, bool) or not 2 <= players <= 4:
        raise ReplayError(1, f"players must be 2, 3 or 4, got {players!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < SEED_LIMIT:
        raise ReplayError(1, f"seed must be an integer 0 <= seed < 2**63, got {seed!r}")
    return players, seed, rules


def replay(source: str | Iterable[str], *, check_dice: bool = True) -> Replay:
    """Re-apply a game record through the engine and return every state.

    ``source`` is the record text or its lines.  With ``check_dice`` every throw must be the one
    the counter-based stream of the record's seed gives (rules.md §5).  The game is replayed
    under the released rules version its header names (an unknown version is a
    :class:`ReplayError` on line 1).  Raises
    :class:`ReplayError` with the 1-based line number and the reason at the first line that
    does not replay.
    """
    # JSON Lines are separated by "\n" alone (str.splitlines() would also split at U+2028 etc.)
    lines = source.split("\n") if isinstance(source, str) else [ln.rstrip("\n") for ln in source]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise ReplayError(0, "the record is empty")
    head = _obj(lines[0], 1)
    players, seed, rules = _header(head)
    state = new_game(players, rules)
    rep = Replay(header=head, states=[state])
    for n, line in enumerate(lines[1:], start=2):
        if rep.result:
            raise ReplayError(n, "nothing may follow the result line")
        obj = _obj(line, n)
        if "throw" in obj:
            state = _replay_throw(state, obj, n, seed if check_dice else None)
        elif "action" in obj:
            state = _replay_decision(state, obj, n)
        elif "scores" in obj:
            _check_result(state, obj, n)
            rep.result = obj
            continue
        else:
            raise ReplayError(n, "expected a throw, a decision or the result line")
        rep.states.append(state)
        rep.events.append(obj)
    if not rep.result:
        raise ReplayError(len(lines), "the record ends without a result line")
    return rep


def _replay_throw(state: State, obj: dict[str, Any], n: int, seed: int | None) -> State:
    text = obj["throw"]
    if not isinstance(text, str):
        raise ReplayError(n, "a throw must be text like 'throw green,red'")
    try:
        faces = parse_throw(text)
    except NotationError as exc:
        raise ReplayError(n, str(exc)) from None
    if seed is not None and state.is_chance:
        expected = sorted(stream_faces(seed, state.turn, state.throw_no + 1)[: state.dice])
        if list(faces) != expected:
            raise ReplayError(
                n,
                f"{text!r} is not the dice stream's throw for seed {seed}, turn {state.turn}, "
                f"throw {state.throw_no + 1} (expected {format_throw(expected)!r})",
            )
    try:
        return apply_throw(state, faces)
    except IllegalThrowError as exc:
        raise ReplayError(n, str(exc)) from None


def _replay_decision(state: State, obj: dict[str, Any], n: int) -> State:
    seat, text = obj.get("seat"), obj["action"]
    if state.is_chance:
        raise ReplayError(n, f"a throw of {state.dice} dice is due, not a decision")
    if state.is_over:
        raise ReplayError(n, "the game is already over")
    if type(seat) is not int or seat != state.seat:  # 1.0 or true is not the integer 1
        raise ReplayError(n, f"seat {seat!r} acts, but it is seat {state.seat}'s decision")
    if not isinstance(text, str):
        raise ReplayError(n, "an action must be text")
    try:
        action = parse_action(text)
    except NotationError as exc:
        raise ReplayError(n, str(exc)) from None
    legal = obj.get("legal")
    actions = legal_actions(state) if legal is not None or "forced" in obj else ()
    if legal is not None:
        expected = [str(a) for a in actions]
        if legal != expected:
            raise ReplayError(n, _legal_difference(legal, expected))
    if "forced" in obj and (obj["forced"] is not True or len(actions) != 1):
        raise ReplayError(
            n, f"'forced' is true alone, and only for a decision with one legal action ({len(actions)} here)"
        )
    try:
        return apply(state, action)
    except (IllegalActionError, EngineError) as exc:
        raise ReplayError(n, str(exc)) from None


def _legal_difference(legal: Any, expected: list[str]) -> str:
    """What differs between a record's list of legal actions and the engine's: the entries
    that are only in one of them (a long list printed whole hid the one changed entry)."""
    if not isinstance(legal, list):
        return f"legal actions must be a list of actions, got {_SHORT.repr(legal)}"
    extra = [a for a in legal if a not in expected]
    missing = [a for a in expected if a not in legal]
    parts = []
    if extra:
        parts.append(f"the record lists {_some(extra)}, which the engine does not allow")
    if missing:
        parts.append(f"it lacks {_some(missing)}, which the engine allows")
    if not parts:
        parts.append("the same actions in another order or repeated")
    counts = f"{len(legal)} listed, {len(expected)} legal"
    return f"legal actions differ from the engine's ({counts}): " + "; ".join(parts)


_SHORT = reprlib.Repr()
_SHORT.maxstring = 80  # an action in full; a long string, or a deep or long value, cut short
_SHORT.maxother = 80


def _some(entries: list[Any], shown: int = 10) -> str:
    """The first ``shown`` of ``entries``, and how many more (a record may hold any list)."""
    text = ", ".join(_SHORT.repr(e) for e in entries[:shown])
    return text + (f" and {len(entries) - shown} more" if len(entries) > shown else "")


def _check_result(state: State, obj: dict[str, Any], n: int) -> None:
    forfeits = obj.get("forfeits", [])
    if not isinstance(forfeits, list) or not all(
        isinstance(f, dict) and isinstance(f.get("seat"), int) and not isinstance(f["seat"], bool)
        for f in forfeits
    ):
        raise ReplayError(n, "forfeits must be a list of objects with a seat")
    seats = [f["seat"] for f in forfeits]
    if not all(0 <= s < state.players for s in seats) or len(set(seats)) != len(seats):
        raise ReplayError(
            n, f"forfeits name seats {seats!r}: each must be a different seat 0..{state.players - 1}"
        )
    termination = obj.get("termination")
    if termination not in TERMINATIONS:
        raise ReplayError(n, f"termination must be one of {', '.join(TERMINATIONS)}")
    if not state.is_over:
        if not forfeits:
            raise ReplayError(n, "the result line comes before the game is over")
        if termination != FORFEIT:
            raise ReplayError(n, "a game stopped early by a forfeit has termination 'forfeit'")
    elif termination != state.termination:
        raise ReplayError(n, f"termination {termination!r}, but the game ended {state.termination!r}")
    pts = list(scores(state))
    if not _same_integers(obj.get("scores"), pts):
        raise ReplayError(n, f"scores {obj.get('scores')!r}, but the game gives {pts!r}")
    expected = list(placings_with_forfeits(pts, seats))
    if not _same_integers(obj.get("placings"), expected):
        raise ReplayError(n, f"placings {obj.get('placings')!r}, expected {expected!r}")


def _same_integers(given: Any, expected: list[int]) -> bool:
    """Whether ``given`` is the list ``expected`` of JSON integers (``12.0`` and ``true`` compare
    equal to ``12`` and ``1`` in Python, but they are not what the engine writes)."""
    return given == expected and all(type(v) is int for v in given)
