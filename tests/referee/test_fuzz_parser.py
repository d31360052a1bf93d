"""Item 6 (a): the action parser and the notation parsers are total on any input.

Property-based (Hypothesis): arbitrary text (every code point, lone surrogates included), text
built from the notation's own pieces (so it gets past the first checks), mutated canonical
actions, and objects that are not text.  ``ARENA_FUZZ_EXAMPLES`` raises the number of examples
(``benchmarks/fuzz.py`` runs 10,000)."""

from __future__ import annotations

import pytest
from hypothesis import given

from arena.engine import Action, ActionKind, InvalidActionError, parse_action

from .fuzz_targets import ACTION_TEXT, NOT_TEXT, check_notation, check_parse_action, fuzz_settings


@fuzz_settings(400)
@given(ACTION_TEXT)
def test_parse_action_is_total_and_round_trips(text: str) -> None:
    check_parse_action(text)


@fuzz_settings(100)
@given(NOT_TEXT)
def test_parse_action_refuses_what_is_not_text(value: object) -> None:
    check_parse_action(value)
    check_notation(value)


@fuzz_settings(300)
@given(ACTION_TEXT)
def test_notation_parsers_are_total(text: str) -> None:
    check_notation(text)


@pytest.mark.parametrize(
    "text",
    [
        "keep green=" + "1" * 5000,  # over Python's 4300-digit int conversion limit: was a ValueError
        "keep green=" + "9" * 100,
        "keep green=100",
        "keep green=1,red=" + "7" * 4301,
        "keep green=\uff15",  # fullwidth digit five: int() accepts it
        "keep green=\u0663",  # arabic-indic digit three
        "keep green=\u00b2",  # superscript two
        "keep green=1\n",
        "keep green=1\x00",
        "keep green=\ud800",
    ],
    ids=["5000-digits", "100-digits", "three-digits", "4301-digits", "fullwidth", "arabic", "superscript",
         "newline", "nul", "surrogate"],
)  # fmt: skip
def test_weird_counts_are_malformed(text: str) -> None:
    with pytest.raises(InvalidActionError) as info:
        parse_action(text)
    assert "malformed action" in str(info.value)


def test_two_digit_counts_still_parse() -> None:
    """Well-formed but never legal: the rules, not the parser, reject them (illegal-action)."""
    assert parse_action("keep green=99") == Action(ActionKind.KEEP, -1, (99, 0, 0, 0, 0))
    assert parse_action("keep green=10,blue=3") == Action(ActionKind.KEEP, -1, (10, 0, 0, 0, 3))
