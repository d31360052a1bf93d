"""Actions as interned, typed value objects, and their canonical notation (rules.md section 6).

Every action that can ever be legal is created once at import time; the rules hand out these
shared instances, so comparing and hashing them is cheap.  :func:`parse_action` is strict:
anything that is not exactly the canonical text raises :class:`InvalidActionError`.
"""

from __future__ import annotations

import re
from enum import IntEnum
from itertools import product
from typing import Final, NamedTuple

from .board import COLOURS, FIVES, LOUNGER_BY_NAME, LOUNGERS, N_COLOURS, N_DICE, REGULAR
from .errors import InvalidActionError, clipped


class ActionKind(IntEnum):
    """The kinds of decision a player can make (R8, R12, R19-R23)."""

    PLACE = 0
    STOP = 1
    KEEP = 2
    CHIP = 3
    FLIP = 4
    RECLAIM = 5
    INVADE = 6
    CONQUER = 7
    TAKE_FIVE = 8
    PASS = 9


_KIND_WORD: Final = {
    ActionKind.PLACE: "place",
    ActionKind.FLIP: "flip",
    ActionKind.RECLAIM: "reclaim",
    ActionKind.INVADE: "invade",
    ActionKind.CONQUER: "conquer",
    ActionKind.TAKE_FIVE: "take-five",
}
_WORD_KIND: Final = {w: k for k, w in _KIND_WORD.items()}
NO_KEEP: Final = (0, 0, 0, 0, 0)


class Action(NamedTuple):
    """One decision.  ``lounger`` is a lounger id (or -1); ``keep`` counts kept dice per colour.

    A named tuple, so that comparing and hashing run at C speed on the hot path.
    """

    kind: ActionKind
    lounger: int = -1
    keep: tuple[int, ...] = NO_KEEP

    def __str__(self) -> str:
        return format_action(self)

    @property
    def kept_dice(self) -> int:
        """How many dice a KEEP sets aside (0 for other kinds)."""
        return sum(self.keep)


def format_action(action: Action) -> str:
    """The canonical text of ``action``: ``place green-4a``, ``keep green=2,red=1``, ``pass``."""
    text = _TEXT_BY_ID.get(id(action))  # an interned action: its text is known
    if text is not None:
        return text
    kind = action.kind
    if kind == ActionKind.STOP:
        return "stop"
    if kind == ActionKind.CHIP:
        return "chip"
    if kind == ActionKind.PASS:
        return "pass"
    if kind == ActionKind.KEEP:
        parts = [f"{COLOURS[c]}={n}" for c, n in enumerate(action.keep) if n]
        return "keep " + ",".join(parts)
    return f"{_KIND_WORD[kind]} {LOUNGERS[action.lounger].name}"


_TEXT_BY_ID: dict[int, str] = {}

# The interned catalogue.
STOP: Final = Action(ActionKind.STOP)
CHIP: Final = Action(ActionKind.CHIP)
PASS: Final = Action(ActionKind.PASS)
PLACE: Final = tuple(Action(ActionKind.PLACE, i) for i in range(len(LOUNGERS)))
FLIP: Final = tuple(Action(ActionKind.FLIP, i) for i in range(len(LOUNGERS)))
RECLAIM: Final = tuple(Action(ActionKind.RECLAIM, i) for i in range(len(LOUNGERS)))
INVADE: Final = tuple(Action(ActionKind.INVADE, i) for i in range(len(LOUNGERS)))
CONQUER: Final = tuple(Action(ActionKind.CONQUER, i) for i in range(len(LOUNGERS)))
TAKE_FIVE: Final = tuple(Action(ActionKind.TAKE_FIVE, i) for i in range(len(LOUNGERS)))
# Every KEEP that can ever be legal: 1 to 5 dice (at least one die must be left to throw).
KEEP: Final = {
    counts: Action(ActionKind.KEEP, -1, counts)
    for counts in product(range(N_DICE), repeat=N_COLOURS)
    if 1 <= sum(counts) <= N_DICE - 1
}


def _catalogue() -> dict[str, Action]:
    every: list[Action] = [STOP, CHIP, PASS, *KEEP.values()]
    every += [PLACE[i] for i in REGULAR]
    for table in (FLIP, RECLAIM, INVADE, CONQUER):
        every += [table[i] for i in REGULAR]
    every += [TAKE_FIVE[i] for i in FIVES]
    return {format_action(a): a for a in every}


ACTIONS_BY_TEXT: Final = _catalogue()
# id(interned action) -> its text (records list every legal action as text at every decision).
# Keyed by identity, so an equal but different action object is formatted as it is; sound
# because the interned actions live as long as this module.
_TEXT_BY_ID.update({id(a): text for text, a in ACTIONS_BY_TEXT.items()})
# A count is a positive integer without leading zeros, of at most two ASCII digits: a KEEP never sets
# aside more than 5 dice, so a longer number is no count at all (and is never converted, however
# long the text a bot sends).  ``[0-9]`` and ``\Z``, not ``\d`` and ``$``: no other script's
# digits, no trailing newline.
MAX_COUNT: Final = 99
_COUNT_RE: Final = re.compile(r"[1-9][0-9]?\Z")


def parse_action(text: str) -> Action:
    """Parse canonical action text; raise :class:`InvalidActionError` for anything else.

    Well-formed actions that can never be legal (``keep green=6``, ``flip five-1``) parse; the
    rules reject them as illegal.  Colours in a KEEP must appear in the order of section 6,
    once each; counts are positive integers without leading zeros, at most :data:`MAX_COUNT`.

    Total: for any argument whatever (any text, however long, with any code points, or not
    text at all) this returns an :class:`Action` or raises :class:`InvalidActionError`, and
    ``parse_action(str(action)) == action`` for every action it returns.
    """
    try:
        action = ACTIONS_BY_TEXT.get(text)
    except TypeError:  # unhashable: certainly not text
        action = None
    if action is not None:
        return action
    if not isinstance(text, str):
        raise InvalidActionError(repr(text)[:200], "an action must be text")
    word, sep, arg = text.partition(" ")
    if word in ("stop", "chip", "pass"):
        raise InvalidActionError(text, f"{word!r} takes no argument")
    if word == "keep":
        return Action(ActionKind.KEEP, -1, _parse_keep(text, arg))
    kind = _WORD_KIND.get(word)
    if kind is None:
        raise InvalidActionError(
            text,
            "expected one of place, stop, keep, chip, flip, reclaim, invade, conquer, take-five, pass",
        )
    if not sep:
        raise InvalidActionError(text, f"{word!r} needs a lounger, e.g. '{word} green-4a'")
    lounger = LOUNGER_BY_NAME.get(arg)
    if lounger is None:
        raise InvalidActionError(text, f"unknown lounger {clipped(arg)} (e.g. green-4a, purple-3, five-1)")
    return Action(kind, lounger.id)


def _parse_keep(text: str, arg: str) -> tuple[int, ...]:
    if not arg:
        raise InvalidActionError(text, "keep needs dice, e.g. 'keep green=2,red=1'")
    counts = [0] * N_COLOURS
    last = -1
    for part in arg.split(","):
        name, eq, num = part.partition("=")
        if name not in COLOURS:
            raise InvalidActionError(text, f"unknown colour {clipped(name)} (colours: {', '.join(COLOURS)})")
        if not eq or not _COUNT_RE.match(num):
            raise InvalidActionError(
                text, f"count for {name} must be a whole number from 1 to {MAX_COUNT} (no leading zeros)"
            )
        colour = COLOURS.index(name)
        if colour <= last:
            raise InvalidActionError(text, "colours must appear once each, in the order " + ",".join(COLOURS))
        last = colour
        counts[colour] = int(num)
    return tuple(counts)
