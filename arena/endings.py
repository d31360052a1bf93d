"""The one closed vocabulary of how a match ended, how each seat came out of it, and what a win is.

Imports nothing from the project (a test checks it), so the store, the ratings input, the CLI, the
web app, the sandbox-free parts of the referee and the templates can all use it.

**Endings.** A match's ending is a :class:`MatchEnd`: ``normal`` (R25), ``round-cap`` (R26) or
``forfeit`` (stopped early because too few seats were left to play).  A seat's ending is its
forfeit :class:`Reason` (``crashed``, ``timeout``, ...) when it forfeited, otherwise the match's
own :class:`MatchEnd`.  So the seat that did *not* forfeit carries ``forfeit``: the labels below
turn that into "won by forfeit" and the offender's reason into "forfeited (disconnected)".  The
stored and reported ``termination`` strings are these members' values; :func:`parse_ending` reads
one back and refuses an unknown value with :class:`UnknownEnding`.

**What people type.** The tables show a match's ``normal`` as "finished" and ``round-cap`` as
"round cap" (:func:`termination_word`); a filter a person types (``arena replays list
--termination``, the web app's ``?termination=``) takes those words or the stored values, in any
case (:func:`parse_termination_filter`).  Its refusal names what is accepted and, unlike
:func:`parse_ending`'s for a stored value, does not suggest that a newer arena wrote it.

**Where to add a forfeit reason:** a member of :class:`Reason` here, and nothing else: the store,
leaderboards, live display, CLI and web pages all ask :func:`is_forfeit` (a test runs every member
through the leaderboard).

**A win.** First place, shared or not, is worth one win split between the seats that share it: a
seat alone in first place wins 1, each of ``k`` seats sharing first place wins ``1/k``
(:func:`win_share`), so the wins of one game add up to 1 and a shared first place counts as the
ratings count a tie (half a win of each pairing).  Placings are standard competition ranking (1 =
best, tied seats share a placing; forfeited seats share the last).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Final

__all__ = [
    "Ending",
    "MatchEnd",
    "Reason",
    "UnknownEnding",
    "by_forfeit",
    "is_forfeit",
    "known_terminations",
    "match_label",
    "parse_ending",
    "parse_match_end",
    "parse_termination_filter",
    "seat_label",
    "shared_by",
    "termination_word",
    "win_share",
    "wins_text",
]


class MatchEnd(StrEnum):
    """How a match ended (also a seat's ending when that seat did not forfeit)."""

    NORMAL = "normal"  # R25: the final round completed
    ROUND_CAP = "round-cap"  # R26: the round cap was reached
    FORFEIT = "forfeit"  # stopped early: a seat forfeited and too few were left to play


class Reason(StrEnum):
    """Why a seat forfeited.  Every failure of a bot ends in exactly one of these."""

    TIMEOUT = "timeout"  # no answer within move time + bank
    ILLEGAL_ACTION = "illegal-action"  # a well-formed action the rules forbid now
    MALFORMED_ACTION = "malformed-action"  # not an action: bad notation, bad bytes, wrong id, flood
    DISCONNECTED = "disconnected"  # the stream closed while the match was on
    CRASHED = "crashed"  # the bot's process exited during the match
    STALLED = "stalled"  # the connection stopped answering keepalive pings (frozen peer)
    NO_SHOW = "no-show"  # did not connect before the match started


Ending = MatchEnd | Reason
"""A seat's ending: its forfeit reason, or the match's own ending."""

_BY_VALUE: Final[dict[str, Ending]] = {str(e): e for e in (*MatchEnd, *Reason)}


class UnknownEnding(ValueError):
    """A stored or reported termination that is not in the vocabulary."""


def known_terminations() -> tuple[str, ...]:
    """Every termination value a match or a seat can have: the match ends, then the forfeit reasons."""
    return tuple(_BY_VALUE)


def parse_ending(text: str | Ending) -> Ending:
    """The member a stored termination string names.

    >>> parse_ending("crashed") is Reason.CRASHED, parse_ending("round-cap") is MatchEnd.ROUND_CAP
    (True, True)
    >>> try:
    ...     parse_ending("exploded")
    ... except UnknownEnding as e:
    ...     print(e)
    unknown termination 'exploded': expected one of normal, round-cap, forfeit, timeout, illegal-action, \
malformed-action, disconnected, crashed, stalled, no-show (a value written by a newer arena? upgrade this one)
    """
    if isinstance(text, MatchEnd | Reason):
        return text
    found = _BY_VALUE.get(text) if isinstance(text, str) else None
    if found is None:
        raise UnknownEnding(
            f"unknown termination {text!r}: expected one of {', '.join(_BY_VALUE)} "
            "(a value written by a newer arena? upgrade this one)"
        )
    return found


def parse_match_end(text: str | MatchEnd) -> MatchEnd:
    """A match's ending (``normal``, ``round-cap`` or ``forfeit``); a forfeit reason is refused."""
    found = parse_ending(text)
    if not isinstance(found, MatchEnd):
        raise UnknownEnding(
            f"{text!r} is a seat's forfeit reason, not a match's ending: expected one of "
            f"{', '.join(MatchEnd)}"
        )
    return found


# the words the tables show for a match's own ending (match_label, termination_word) ...
_WORDS: Final[dict[MatchEnd, str]] = {MatchEnd.NORMAL: "finished", MatchEnd.ROUND_CAP: "round cap"}
# ... read back by the filters, with one more spelling
_SHOWN: Final[dict[str, MatchEnd]] = {**{w: e for e, w in _WORDS.items()}, "round_cap": MatchEnd.ROUND_CAP}


def termination_word(termination: str | Ending) -> str:
    """The word a table shows for a stored termination, and a filter menu offers for it:
    ``finished`` for ``normal``, ``round cap`` for ``round-cap``, any other value as it is.
    :func:`parse_termination_filter` reads it back.

    >>> termination_word("normal"), termination_word(MatchEnd.ROUND_CAP), termination_word("crashed")
    ('finished', 'round cap', 'crashed')
    """
    found = _BY_VALUE.get(str(termination))
    return _WORDS[found] if isinstance(found, MatchEnd) and found in _WORDS else str(termination)


def parse_termination_filter(text: str) -> Ending:
    """The ending a termination filter a person typed names: a stored value (``normal``,
    ``round-cap``, ``crashed``, ...) or a word the tables show for a match's ending
    (``finished``, ``round cap``), in any case, spaces around ignored.  An unknown one raises
    :class:`UnknownEnding` naming every accepted value (and no talk of newer arenas: the person
    typed it, nothing stored it).

    >>> parse_termination_filter("finished"), parse_termination_filter(" Round Cap ")
    (<MatchEnd.NORMAL: 'normal'>, <MatchEnd.ROUND_CAP: 'round-cap'>)
    >>> parse_termination_filter("CRASHED") is Reason.CRASHED
    True
    >>> try:
    ...     parse_termination_filter("banana")
    ... except UnknownEnding as e:
    ...     print(e)
    unknown termination 'banana': give one of normal, round-cap, forfeit, timeout, illegal-action, \
malformed-action, disconnected, crashed, stalled, no-show (or finished, round cap: the words the tables show)
    """
    word = text.strip().lower()
    found = _BY_VALUE.get(word) or _SHOWN.get(word)
    if found is None:
        raise UnknownEnding(
            f"unknown termination {text!r}: give one of {', '.join(_BY_VALUE)} "
            "(or finished, round cap: the words the tables show)"
        )
    return found


def is_forfeit(termination: str | Ending | None) -> bool:
    """Whether a seat's ending says that *this seat* forfeited (a :class:`Reason`).

    The seat that won because the other forfeited carries ``forfeit`` (a :class:`MatchEnd`): not a
    forfeit of its own.  None (not finished) is not a forfeit; an unknown string raises
    :class:`UnknownEnding`.

    >>> is_forfeit("no-show"), is_forfeit("forfeit"), is_forfeit("normal"), is_forfeit(None)
    (True, False, False, False)
    """
    return termination is not None and isinstance(parse_ending(termination), Reason)


def by_forfeit(termination: str | Ending | None) -> bool:
    """Whether a forfeit decided this seat's ending: its own (a :class:`Reason`), or the others'
    (``forfeit``: the match stopped because too few seats were left, "won by forfeit").

    >>> by_forfeit("timeout"), by_forfeit("forfeit"), by_forfeit("round-cap"), by_forfeit(None)
    (True, True, False, False)
    """
    return termination is not None and (
        is_forfeit(termination) or parse_ending(termination) is MatchEnd.FORFEIT
    )


def shared_by(placings: Sequence[int | None], seat: int) -> int:
    """How many seats share ``seat``'s placing (itself included; 1 = alone in it).

    >>> shared_by([1, 1, 3, 4], 0), shared_by([1, 1, 3, 4], 2)
    (2, 1)
    """
    return sum(1 for p in placings if p == placings[seat])


def win_share(placings: Sequence[int | None], seat: int, *, forfeited: bool = False) -> float:
    """The seat's win in one game: 1 alone in first place, ``1/k`` when ``k`` seats share it, else 0;
    always 0 for a seat that ``forfeited`` (when every seat forfeited, they share the first place
    and nobody won).

    >>> win_share([1, 2], 0), win_share([1, 1, 3], 1), win_share([1, 1, 1, 1], 3), win_share([1, 2], 1)
    (1.0, 0.5, 0.25, 0.0)
    >>> win_share([1, 1], 0, forfeited=True)
    0.0
    """
    if forfeited:
        return 0.0
    return 1.0 / shared_by(placings, seat) if placings[seat] == 1 else 0.0


def wins_text(wins: float) -> str:
    """A count of wins for a table: whole numbers plain, shares with up to two decimals.

    >>> wins_text(3.0), wins_text(2.5), wins_text(1 / 3 + 1)
    ('3', '2.5', '1.33')
    """
    text = f"{wins:.2f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


def _base_label(end: MatchEnd) -> str:
    return _WORDS.get(end, "finished")


def seat_label(termination: str | Ending | None, placing: int | None = None) -> str:
    """One seat's own outcome.

    >>> seat_label("disconnected")
    'forfeited (disconnected)'
    >>> seat_label("forfeit", placing=1)
    'won by forfeit'
    >>> seat_label("normal"), seat_label("round-cap"), seat_label(None)
    ('finished', 'round cap', '-')
    """
    if termination is None:
        return "-"
    end = parse_ending(termination)
    if isinstance(end, Reason):
        return f"forfeited ({end})"
    if end is MatchEnd.FORFEIT:
        return "won by forfeit" if placing in (None, 1) else "others forfeited"
    return _base_label(end)


def match_label(termination: str | MatchEnd | None, forfeits: Sequence[tuple[str, str]] = ()) -> str:
    """How the match ended, naming who forfeited: ``forfeits`` are (name, reason) pairs.

    >>> match_label("forfeit", [("rb", "disconnected")])
    'rb forfeited (disconnected)'
    >>> match_label("normal", [("rb", "crashed"), ("x", "timeout")])
    'finished; rb forfeited (crashed), x forfeited (timeout)'
    >>> match_label("round-cap"), match_label("normal"), match_label(None)
    ('round cap', 'finished', '-')
    """
    who = ", ".join(f"{name} forfeited ({reason})" for name, reason in forfeits)
    if termination is None:
        return who or "-"
    end = parse_match_end(termination)
    if end is MatchEnd.FORFEIT:
        return who or "stopped: a seat forfeited"
    base = _base_label(end)
    return f"{base}; {who}" if who else base
