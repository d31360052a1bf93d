"""Errors and notation (rules.md §6): malformed text is *invalid*, a well-formed action that the
rules forbid is *illegal* (R8-R24), bad throws are rejected (R10-R13); the notation round-trips."""

from __future__ import annotations

import itertools

import pytest
from engine_helpers import ALL_NAMES, NO_GUARD_6, faces, roll, setup, throw, turn

from arena.engine import (
    FACES,
    LOUNGERS,
    TRACK,
    Action,
    ActionKind,
    IllegalActionError,
    IllegalThrowError,
    InvalidActionError,
    NotationError,
    apply,
    apply_throw,
    apply_throw_counts,
    format_action,
    format_throw,
    legal_actions,
    make_policy,
    new_game,
    parse_action,
    parse_throw,
    play_game,
    to_snapshot,
)
from arena.engine.actions import ACTIONS_BY_TEXT
from arena.engine.board import track_name
from arena.engine.notation import parse_face, parse_lounger, parse_track

MALFORMED = [
    "",
    " ",
    "keep",
    "keep ",
    "keep green=0",
    "keep green=01",
    "keep green=-1",
    "keep green=1.0",
    "keep green=x",
    "keep green",
    "keep green=",
    "keep =1",
    "keep red=1,green=1",  # wrong order
    "keep green=1,green=1",  # twice
    "keep green=1,",
    "keep green=1, red=1",
    "keep  green=1",
    "keep lifeguard=1",
    "keep pink=1",
    "keep GREEN=1",
    "flip",
    "flip ",
    "flip nowhere",
    "flip green-4",  # green is two wide: a or b
    "flip purple-4a",  # purple is one wide
    "flip green-5a",
    "flip five-3",
    "flip Green-4a",
    "flip  green-4a",
    "flip green-4a ",
    "place",
    "take-five",
    "take_five five-1",
    "takefive five-1",
    "jump",
    "jump green-4a",
    "stop now",
    "stop ",
    " stop",
    "STOP",
    "Stop",
    "pass pass",
    "chip 1",
    "stop\n",
    "pass\t",
    "keep green=2,red=1\n",
]


@pytest.mark.parametrize("text", MALFORMED)
def test_section6_malformed_action_text_is_invalid(text: str) -> None:
    with pytest.raises(InvalidActionError) as info:
        parse_action(text)
    assert not isinstance(info.value, IllegalActionError)
    assert isinstance(info.value, NotationError)
    assert "malformed action" in str(info.value)
    assert info.value.text == text


@pytest.mark.parametrize("text", ["keep green=0", "flip nowhere", "", "stop now", "keep red=1,green=1"])
def test_section6_apply_with_malformed_text_raises_invalid_not_illegal(text: str) -> None:
    for s in (new_game(2), throw(setup(2), NO_GUARD_6), roll(setup(2), NO_GUARD_6)):
        with pytest.raises(InvalidActionError):
            apply(s, text)


def test_section6_well_formed_but_never_legal_actions_parse() -> None:
    """Parsing is not legality: these are well-formed (R8, R12, R19-R23 forbid them)."""
    assert parse_action("keep green=6") == Action(ActionKind.KEEP, -1, (6, 0, 0, 0, 0))
    assert parse_action("keep green=10,blue=3") == Action(ActionKind.KEEP, -1, (10, 0, 0, 0, 3))
    assert parse_action("flip five-1").kind == ActionKind.FLIP
    assert parse_action("place five-2").kind == ActionKind.PLACE
    assert parse_action("take-five green-4a").kind == ActionKind.TAKE_FIVE
    s = roll(setup(2), "green green green green green green")
    for text in ("keep green=6", "flip five-1", "place five-2", "take-five green-4a", "invade five-1"):
        with pytest.raises(IllegalActionError):
            apply(s, text)


def _positions():
    """(state, illegal action, phase, seat) in every decision phase, for several seats."""
    s0 = new_game(3)
    s1 = apply(s0, "place green-4a")
    roll_state = throw(turn(setup(3), NO_GUARD_6, "pass"), "green green purple yellow red blue")
    action_state = roll(turn(turn(setup(3), NO_GUARD_6, "pass"), NO_GUARD_6, "pass"), NO_GUARD_6)
    return [
        (s0, "stop", "setup", 0),
        (s1, "place green-4a", "setup", 1),
        (s1, "pass", "setup", 1),
        (roll_state, "chip", "roll", 1),
        (roll_state, "keep green=3", "roll", 1),
        (roll_state, "keep green=2,purple=1,yellow=1,red=1,blue=1", "roll", 1),
        (roll_state, "flip green-4a", "roll", 1),
        (action_state, "flip green-4b", "action", 2),
        (action_state, "take-five five-1", "action", 2),
        (action_state, "stop", "action", 2),
        (action_state, "place green-4a", "action", 2),
    ]


@pytest.mark.parametrize("case", range(11))
def test_r8_r24_illegal_action_message_names_action_phase_and_seat(case: int) -> None:
    state, text, phase, seat = _positions()[case]
    assert state.seat == seat and state.phase.label == phase
    before = to_snapshot(state)
    with pytest.raises(IllegalActionError) as info:
        apply(state, text)
    err = info.value
    msg = str(err)
    assert repr(text) in msg
    assert f"phase {phase}" in msg
    assert f"seat {seat}" in msg
    assert (err.action, err.phase, err.seat) == (text, phase, seat)
    assert err.reason and err.reason in msg
    assert not isinstance(err, InvalidActionError)
    assert to_snapshot(state) == before
    # an Action object fails the same way as its text
    with pytest.raises(IllegalActionError):
        apply(state, parse_action(text))


def test_r12_illegal_keep_reasons() -> None:
    s = throw(setup(2), "green green purple yellow red lifeguard")
    with pytest.raises(IllegalActionError, match="STOP"):
        apply(s, "keep green=2,purple=1,yellow=1,red=1")
    with pytest.raises(IllegalActionError, match="does not hold"):
        apply(s, "keep blue=1")


def test_r10_r25_illegal_action_at_chance_node_and_game_over() -> None:
    """No decision while a throw is due (R10) or after the end (R25)."""
    s = setup(2)  # a throw is due
    with pytest.raises(IllegalActionError) as info:
        apply(s, "stop")
    assert info.value.seat is None and info.value.phase == "throw"
    assert "'stop'" in str(info.value) and "throw" in str(info.value)
    over = play_game(4, [make_policy("greedy", 4, k) for k in range(2)]).final
    assert over.is_over and legal_actions(over) == ()
    for text in ("pass", "stop", "place green-4a"):
        with pytest.raises(IllegalActionError, match="game is over") as info:
            apply(over, text)
        assert info.value.phase == "over"


def test_apply_never_changes_the_input_state() -> None:
    """§4: states are values; apply and apply_throw return new ones (R8-R26)."""
    s = setup(2)
    states = [new_game(2), s]
    t = throw(s, "lifeguard green green purple yellow red")
    states.append(t)
    a = apply(t, "stop")
    states.append(a)
    for st in states:
        snap, key = to_snapshot(st), st.key()
        for action in legal_actions(st):
            apply(st, action)
            assert st.key() == key
        for bad in ("place five-1", "keep green=9", "flip five-2", "chip"):
            with pytest.raises(IllegalActionError):
                apply(st, bad)
        if st.is_chance:
            apply_throw(st, faces(NO_GUARD_6))
        assert to_snapshot(st) == snap and st.key() == key
    # the successor differs and its predecessor is intact
    assert apply(a, "flip green-2a").secured != a.secured


@pytest.mark.parametrize(
    "bad",
    [
        (),
        (0, 1, 2, 3, 4),
        (0, 1, 2, 3, 4, 5, 0),
        (0, 1, 2, 3, 4, 6),
        (0, 1, 2, 3, 4, -1),
        (0, 1, 2, 3, 4, "x"),
        (0, 1, 2, 3, 4, 1.0),
        (0, 1, 2, 3, 4, None),
    ],
)
def test_r10_apply_throw_rejects_wrong_count_and_bad_faces(bad: tuple) -> None:
    s = setup(2)
    with pytest.raises(IllegalThrowError):
        apply_throw(s, bad)


def test_r12_apply_throw_count_follows_the_dice_left() -> None:
    s = apply(throw(setup(2), "green green purple yellow red blue"), "keep green=2")
    assert s.dice == 4
    with pytest.raises(IllegalThrowError, match="4 dice"):
        apply_throw(s, faces(NO_GUARD_6))
    apply_throw(s, faces("red red red red"))


def test_r10_r12_apply_throw_not_at_a_chance_node() -> None:
    for s in (new_game(2), throw(setup(2), NO_GUARD_6), roll(setup(2), NO_GUARD_6)):
        with pytest.raises(IllegalThrowError, match="no throw expected"):
            apply_throw(s, faces(NO_GUARD_6))


def test_r10_apply_throw_counts() -> None:
    s = setup(2)
    expected = throw(s, "lifeguard green purple lifeguard green lifeguard")
    assert apply_throw_counts(s, (2, 1, 0, 0, 0, 3)) == expected
    for bad in ((1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1, 0), (1, 1, 1, 1, 1, 0)):
        with pytest.raises(IllegalThrowError):
            apply_throw_counts(s, bad)


# --------------------------------------------------------------------------- notation round trips


def test_section6_every_action_round_trips() -> None:
    assert len(ACTIONS_BY_TEXT) > 0
    for text, action in ACTIONS_BY_TEXT.items():
        assert parse_action(text) == action
        assert format_action(action) == text
        assert str(action) == text
        assert parse_action(format_action(action)) == action


def test_section6_action_catalogue_is_complete() -> None:
    """Every action legal somewhere is in the catalogue: 24 places, 24 x 4 lounger actions, 2
    take-fives, stop, chip, pass and every KEEP of 1..5 dice (R8, R12, R19-R23)."""
    kinds = {}
    for a in ACTIONS_BY_TEXT.values():
        kinds[a.kind] = kinds.get(a.kind, 0) + 1
    keeps = sum(1 for c in itertools.product(range(6), repeat=5) if 1 <= sum(c) <= 5)
    assert kinds == {
        ActionKind.PLACE: 24,
        ActionKind.FLIP: 24,
        ActionKind.RECLAIM: 24,
        ActionKind.INVADE: 24,
        ActionKind.CONQUER: 24,
        ActionKind.TAKE_FIVE: 2,
        ActionKind.STOP: 1,
        ActionKind.CHIP: 1,
        ActionKind.PASS: 1,
        ActionKind.KEEP: keeps,
    }
    assert "keep green=2,red=1" in ACTIONS_BY_TEXT
    assert "take-five five-2" in ACTIONS_BY_TEXT
    assert "reclaim blue-2b" in ACTIONS_BY_TEXT


def test_section6_throws_round_trip() -> None:
    assert format_throw(faces("lifeguard red green green")) == "throw green,green,red,lifeguard"
    assert parse_throw("throw green,green,red,lifeguard") == (0, 0, 3, 5)
    for k in range(1, 7):
        for combo in itertools.combinations_with_replacement(range(6), k):
            text = format_throw(combo)
            assert parse_throw(text) == combo
            assert format_throw(tuple(reversed(combo))) == text


@pytest.mark.parametrize(
    "text",
    [
        "throw",
        "throw ",
        "green,red",
        "throw red,green",  # not in canonical order
        "throw green,,red",
        "throw green, red",
        "throw pink",
        "throws green",
        "throw lifeguard,green",
    ],
)
def test_section6_malformed_throw_text(text: str) -> None:
    with pytest.raises(NotationError):
        parse_throw(text)


def test_section6_faces_loungers_and_track_round_trip() -> None:
    for f, name in enumerate(FACES):
        assert parse_face(name) == f
    assert FACES == ("green", "purple", "yellow", "red", "blue", "lifeguard")
    for name in ALL_NAMES:
        assert parse_lounger(name).name == name
    for lo in LOUNGERS:
        assert parse_lounger(lo.name) is lo
    for pos in range(-1, len(TRACK)):
        assert parse_track(track_name(pos)) == pos
    for bad in ("green-4", "five-0", "GREEN-4a", ""):
        with pytest.raises(NotationError):
            parse_lounger(bad)
    for bad in ("row5-right", "diving board", "lifeguard", ""):
        with pytest.raises(NotationError):
            parse_track(bad)
    with pytest.raises(NotationError):
        parse_face("white")


@pytest.mark.parametrize("text", ["place green-4a\x00" + "A" * 60000, "keep " + "x" * 60000 + "=1"])
def test_section6_a_long_malformed_action_is_quoted_short_everywhere_in_its_message(text: str) -> None:
    """A bot may send 64 KiB: the message quotes the action once, cut, and the reason's own quote
    (the unknown lounger, the unknown colour) is cut the same way (it repeated 1,000 characters)."""
    with pytest.raises(InvalidActionError) as info:
        parse_action(text)
    message = str(info.value)
    assert len(message) < 400, message
    assert message.count("characters)") == 2, message
