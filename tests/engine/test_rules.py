"""One or more tests for every rule R1-R28 of docs/rules.md.

Positions are reached by playing (setup placements, throws, actions).  With two players the
default setup of :func:`engine_helpers.setup` gives, in every row v (4, 3, 2):
``green-va`` 0, ``green-vb`` 1, ``purple-v`` 0, ``yellow-va`` 1, ``yellow-vb`` 0, ``red-v`` 1,
``blue-va`` 0, ``blue-vb`` 1 (seat numbers); purple is all seat 0's and red all seat 1's.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from engine_helpers import (
    ALL_NAMES,
    FIVE_NAMES,
    NO_GUARD_6,
    REGULAR_NAMES,
    count_occupied,
    edit,
    faces,
    legal_texts,
    lid,
    name_owner,
    reach_names,
    roll,
    setup,
    throw,
    turn,
)

from arena.engine import (
    COLOURS,
    FACES,
    LIFEGUARD,
    LOUNGERS,
    TRACK,
    IllegalActionError,
    IllegalThrowError,
    Phase,
    apply,
    apply_throw,
    from_snapshot,
    legal_actions,
    new_game,
    outcome,
    placings,
    scores,
    stream_faces,
    throw_distribution,
    to_snapshot,
)
from arena.engine.board import (
    CHIPS_TOTAL,
    DIVING_BOARD,
    FIGURES_PER_PLAYER,
    N_DICE,
    ROUND_CAP,
    TOWELS_PER_PLAYER,
    advance,
    blocked_by,
    track_name,
)
from arena.engine.notation import parse_track

TRACK_ORDER = [
    "row4-right",
    "row3-right",
    "row2-right",
    "blue",
    "red",
    "yellow",
    "purple",
    "green",
    "row2-left",
    "row3-left",
    "row4-left",
]


def names_where(pred) -> set[str]:
    return {lo.name for lo in LOUNGERS if pred(lo)}


# --------------------------------------------------------------------------- R1-R6: components


def test_r1_six_dice_with_five_colour_faces_and_one_lifeguard_face() -> None:
    assert N_DICE == 6
    assert len(FACES) == 6
    assert FACES[LIFEGUARD] == "lifeguard" and LIFEGUARD == 5
    assert list(FACES[:5]) == list(COLOURS)
    # all six faces equally likely
    dist = dict(throw_distribution(1))
    assert len(dist) == 6
    assert set(dist.values()) == {Fraction(1, 6)}
    # the first throw of a turn needs exactly six dice
    s = setup(2)
    assert s.dice == 6
    with pytest.raises(IllegalThrowError):
        apply_throw(s, faces("green green green green green"))


def test_r1_dice_stream_only_shows_the_six_faces() -> None:
    seen = Counter(f for t in range(1, 200) for f in stream_faces(7, t, 1))
    assert set(seen) == set(range(6))


def test_r2_five_colours_in_canonical_order() -> None:
    assert COLOURS == ("green", "purple", "yellow", "red", "blue")


def test_r3_twenty_six_loungers_with_stable_ids_and_names() -> None:
    assert len(LOUNGERS) == 26
    assert [lo.id for lo in LOUNGERS] == list(range(26))
    expected = []
    for value in (4, 3, 2):
        expected += [
            f"green-{value}a",
            f"green-{value}b",
            f"purple-{value}",
            f"yellow-{value}a",
            f"yellow-{value}b",
            f"red-{value}",
            f"blue-{value}a",
            f"blue-{value}b",
        ]
    expected += ["five-1", "five-2"]
    assert [lo.name for lo in LOUNGERS] == expected
    assert len(set(expected)) == 26


def test_r3_regular_layout_2_1_2_1_2_and_values() -> None:
    regular = [lo for lo in LOUNGERS if not lo.is_five]
    assert len(regular) == 24
    # three rows of eight, value 4 nearest the pool
    for value in (2, 3, 4):
        row = [lo for lo in regular if lo.value == value]
        assert len(row) == 8
        assert [lo.colour for lo in row] == [
            0,
            0,
            1,
            2,
            2,
            3,
            4,
            4,
        ]  # green 2, purple 1, yellow 2, red 1, blue 2
    per = Counter((COLOURS[lo.colour], lo.value) for lo in regular)
    for colour in ("green", "yellow", "blue"):
        assert [per[(colour, v)] for v in (2, 3, 4)] == [2, 2, 2]
    for colour in ("purple", "red"):
        assert [per[(colour, v)] for v in (2, 3, 4)] == [1, 1, 1]
    # the name encodes colour and value
    for lo in regular:
        colour, rest = lo.name.split("-")
        assert COLOURS[lo.colour] == colour and int(rest[0]) == lo.value


def test_r3_two_five_loungers_value_five_no_colour() -> None:
    fives = [lo for lo in LOUNGERS if lo.is_five]
    assert [(lo.name, lo.value, lo.colour) for lo in fives] == [("five-1", 5, None), ("five-2", 5, None)]


def test_r4_each_player_has_16_towels_and_5_figures() -> None:
    assert (TOWELS_PER_PLAYER, FIGURES_PER_PLAYER) == (16, 5)
    for n in (2, 3, 4):
        s = new_game(n)
        assert s.towels == (16,) * n
        assert s.figures == (5,) * n


def test_r5_sixteen_chips_all_in_the_pool_at_start() -> None:
    assert CHIPS_TOTAL == 16
    for n in (2, 3, 4):
        s = new_game(n)
        assert s.pool == 16
        assert s.chips == (0,) * n


def test_r6_track_order_and_names() -> None:
    assert [f.name for f in TRACK] == TRACK_ORDER
    assert track_name(DIVING_BOARD) == "diving-board"
    for k, name in enumerate(TRACK_ORDER):
        assert track_name(k) == name
        assert parse_track(name) == k
    assert new_game(3).guard == DIVING_BOARD
    assert to_snapshot(new_game(2))["lifeguard"] == "diving-board"


def test_r6_blocking_of_rows_and_colours_and_diving_board_blocks_nothing() -> None:
    assert blocked_by(DIVING_BOARD) == frozenset()
    for k, name in enumerate(TRACK_ORDER):
        blocked = {LOUNGERS[i].name for i in blocked_by(k)}
        if name.startswith("row"):
            value = int(name[3])
            expected = names_where(lambda lo, v=value: not lo.is_five and lo.value == v)
            assert len(expected) == 8
        else:
            expected = names_where(lambda lo, c=name: not lo.is_five and COLOURS[lo.colour] == c)
            assert len(expected) == (3 if name in ("purple", "red") else 6)
        assert blocked == expected, name
        assert not blocked & set(FIVE_NAMES)


def test_r6_first_step_from_diving_board_goes_to_row4_right() -> None:
    assert advance(DIVING_BOARD, 1) == 0
    s = roll(setup(2), "lifeguard green purple yellow red blue")
    assert to_snapshot(s)["lifeguard"] == "row4-right"
    # row4-right blocks the value-4 loungers: six green would otherwise reach green-4a/4b
    s = roll(setup(2), "green green green green green lifeguard")
    assert to_snapshot(s)["lifeguard"] == "row4-right"
    assert {"green-3a", "green-3b", "green-2a", "green-2b"} <= reach_names(s)
    assert not {"green-4a", "green-4b"} & reach_names(s)


def test_r6_r15_lifeguard_blocking_in_play_for_a_colour_field() -> None:
    s = edit(setup(2), lifeguard="blue")
    s = roll(s, "blue blue blue blue green green")
    assert reach_names(s) == {"green-2a", "green-2b"}
    assert legal_texts(s) == ["pass", "flip green-2a", "invade green-2b"]


# --------------------------------------------------------------------------- R7-R9: setup


@pytest.mark.parametrize("players", [0, 1, 5, 6])
def test_r7_player_count_must_be_2_to_4(players: int) -> None:
    with pytest.raises(ValueError):
        new_game(players)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_r7_r8_seat_0_starts_and_setup_goes_in_seat_order(players: int) -> None:
    s = new_game(players)
    seats = []
    while s.phase == Phase.SETUP:
        seats.append(s.seat)
        s = apply(s, legal_actions(s)[-1])
    assert seats == [k % players for k in range(24)]


@pytest.mark.parametrize(("players", "each"), [(2, 12), (3, 8), (4, 6)])
def test_r8_setup_places_12_8_6_plain_towels_each(players: int, each: int) -> None:
    s = setup(players)
    owners = Counter(s.towel[lid(n)] for n in REGULAR_NAMES)
    assert owners == dict.fromkeys(range(players), each)
    assert s.towels == (16 - each,) * players
    assert not any(s.secured)
    assert s.figure == (-1,) * 26
    assert s.occupied == 0 and s.unoccupied == 26


def test_r8_setup_legal_actions_are_the_free_regular_loungers() -> None:
    s = new_game(2)
    assert legal_texts(s) == [f"place {n}" for n in REGULAR_NAMES]
    s = apply(s, "place blue-2b")
    assert s.seat == 1
    assert legal_texts(s) == [f"place {n}" for n in REGULAR_NAMES if n != "blue-2b"]
    for bad in ("place blue-2b", "place five-1", "place five-2", "stop", "pass"):
        with pytest.raises(IllegalActionError):
            apply(s, bad)


def test_r8_setup_leaves_lifeguard_chips_and_fives_untouched() -> None:
    for players in (2, 3, 4):
        s = new_game(players)
        while s.phase == Phase.SETUP:
            assert s.guard == DIVING_BOARD
            assert s.pool == 16 and s.turn == 0 and s.round == 0
            s = apply(s, legal_actions(s)[0])
        assert s.guard == DIVING_BOARD
        assert s.pool == 16
        for name in FIVE_NAMES:
            assert s.towel[lid(name)] == -1 and s.figure[lid(name)] == -1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_r9_seat_0_takes_the_first_game_turn(players: int) -> None:
    s = setup(players)
    assert (s.phase, s.seat, s.turn, s.round, s.throw_no, s.dice) == (Phase.THROW, 0, 1, 1, 0, 6)
    assert legal_actions(s) == ()


# --------------------------------------------------------------------------- R10-R14: rolling


def test_r10_first_throw_uses_six_dice_and_kept_starts_empty() -> None:
    s = setup(2)
    assert s.dice == 6 and sum(s.kept) == 0
    s = apply(throw(s, "green green purple yellow red blue"), "keep green=2")
    assert s.dice == 4
    s = apply(throw(s, "purple yellow red blue"), "stop")
    s = apply(s, "pass")
    # the next turn starts again with all six dice and nothing kept
    assert (s.seat, s.turn, s.dice, s.kept, s.throw_no) == (1, 2, 6, (0,) * 6, 0)


def test_r11_keep_sets_the_lifeguards_of_the_last_throw_aside() -> None:
    s = throw(setup(2), "lifeguard lifeguard green green purple yellow")
    s = apply(s, "keep green=1")
    assert s.kept == (1, 0, 0, 0, 0, 2)
    assert s.dice == 3  # green, purple, yellow again; the lifeguards are not thrown again
    s = throw(s, "lifeguard purple purple")
    s = apply(s, "keep purple=1")
    assert s.kept == (1, 1, 0, 0, 0, 3)
    assert s.dice == 1


def test_r11_stop_sets_the_last_lifeguards_aside_and_they_move_him() -> None:
    s = throw(setup(2), "lifeguard lifeguard green green purple purple")
    s = apply(s, "keep green=2")
    s = throw(s, "lifeguard purple")
    assert legal_texts(s) == ["stop"]
    s = apply(s, "stop")
    assert s.result == (2, 1, 0, 0, 0, 3)
    assert to_snapshot(s)["lifeguard"] == "row2-right"  # three steps


def test_r11_r12_chip_rethrows_the_lifeguards_of_the_last_throw_too() -> None:
    s = edit(setup(2), chips=[1, 0], pool=15)
    s = throw(s, "lifeguard lifeguard green purple yellow red")
    s = apply(s, "chip")
    assert s.dice == 6
    assert s.kept == (0,) * 6


def test_r12_stop_result_is_kept_plus_every_die_of_last_throw() -> None:
    s = throw(setup(2), "green green green purple yellow red")
    s = apply(s, "keep green=3")
    s = throw(s, "green purple lifeguard")
    s = apply(s, "stop")
    assert s.phase == Phase.ACTION
    assert s.result == (4, 1, 0, 0, 0, 1)


def test_r12_keep_must_be_a_non_empty_part_of_the_colour_dice_leaving_one() -> None:
    s = throw(setup(2), "green green green green green lifeguard")
    assert legal_texts(s) == ["stop", "keep green=1", "keep green=2", "keep green=3", "keep green=4"]
    for bad in ("keep green=5", "keep green=6", "keep purple=1", "keep green=1,purple=1"):
        with pytest.raises(IllegalActionError):
            apply(s, bad)


def test_r12_keep_lists_every_sub_multiset() -> None:
    s = throw(setup(2), "green green purple yellow yellow yellow")
    keeps = [a for a in legal_texts(s) if a.startswith("keep")]
    assert len(keeps) == 3 * 2 * 4 - 2
    assert len(set(keeps)) == len(keeps)
    assert "keep green=2,purple=1,yellow=3" not in keeps
    assert "keep green=2,purple=1,yellow=2" in keeps


def test_r12_chip_needs_a_chip_and_returns_it_to_the_pool() -> None:
    s = throw(setup(2), "green green purple yellow red blue")
    assert "chip" not in legal_texts(s)
    with pytest.raises(IllegalActionError, match="no chip"):
        apply(s, "chip")
    s = edit(setup(2), chips=[2, 0], pool=14)
    s = throw(s, "green green purple yellow red blue")
    assert legal_texts(s)[:2] == ["stop", "chip"]
    s = apply(s, "chip")
    assert (s.chips, s.pool, s.dice, s.phase) == ((1, 0), 15, 6, Phase.THROW)


def test_r12_chip_keeps_earlier_dice_aside_and_counts_as_a_throw() -> None:
    s = edit(setup(2), chips=[1, 0], pool=15)
    s = throw(s, "lifeguard green green purple yellow red")
    assert s.throw_no == 1
    s = apply(s, "keep green=2")
    assert s.kept == (2, 0, 0, 0, 0, 1) and s.dice == 3
    s = throw(s, "lifeguard lifeguard purple")
    assert s.throw_no == 2
    s = apply(s, "chip")
    assert s.kept == (2, 0, 0, 0, 0, 1) and s.dice == 3
    s = throw(s, "purple purple purple")
    assert s.throw_no == 3
    s = apply(s, "stop")
    assert s.result == (2, 3, 0, 0, 0, 1)
    assert to_snapshot(s)["lifeguard"] == "row4-right"  # one step: the chipped lifeguards do not count


def test_r12_no_limit_on_chips_per_turn_other_than_chips_held() -> None:
    s = edit(setup(2), chips=[3, 0], pool=13)
    s = throw(s, "green purple yellow red blue lifeguard")
    for left in (2, 1, 0):
        s = apply(s, "chip")
        assert s.chips[0] == left
        s = throw(s, "green purple yellow red blue lifeguard")
    assert "chip" not in legal_texts(s)
    assert s.pool == 16 and s.throw_no == 4


def test_r13_fewer_than_two_colour_dice_leave_only_stop_or_chip() -> None:
    s = throw(setup(2), "green lifeguard lifeguard lifeguard lifeguard lifeguard")
    assert legal_texts(s) == ["stop"]
    s = throw(setup(2), "lifeguard lifeguard lifeguard lifeguard lifeguard lifeguard")
    assert legal_texts(s) == ["stop"]
    s = throw(edit(setup(2), chips=[1, 0], pool=15), "red lifeguard lifeguard lifeguard lifeguard lifeguard")
    assert legal_texts(s) == ["stop", "chip"]
    with pytest.raises(IllegalActionError):
        apply(s, "keep red=1")


def test_r13_rolling_ends_after_at_most_six_throws_without_chips() -> None:
    s = setup(2)
    for n in range(6, 0, -1):
        assert s.dice == n
        s = throw(s, " ".join(["green"] * n))
        if n > 1:
            s = apply(s, "keep green=1")
    assert s.throw_no == 6
    assert legal_texts(s) == ["stop"]
    s = apply(s, "stop")
    assert s.result == (6, 0, 0, 0, 0, 0)


def test_r14_lifeguards_of_a_chipped_throw_do_not_move_him() -> None:
    s = edit(setup(2), chips=[1, 0], pool=15)
    s = throw(s, "lifeguard lifeguard lifeguard green purple yellow")
    s = apply(s, "chip")
    s = throw(s, "green green green green green green")
    s = apply(s, "stop")
    assert s.result[LIFEGUARD] == 0
    assert s.guard == DIVING_BOARD


# --------------------------------------------------------------------------- R15: the lifeguard moves


@pytest.mark.parametrize(
    ("start", "steps", "end"),
    [
        ("diving-board", 0, "diving-board"),
        ("diving-board", 1, "row4-right"),
        ("diving-board", 2, "row3-right"),
        ("diving-board", 6, "yellow"),
        ("row4-right", 1, "row3-right"),
        ("green", 3, "row4-left"),
        ("row4-left", 1, "row4-right"),  # wrap-around
        ("row3-left", 3, "row3-right"),
        ("purple", 6, "row3-right"),
    ],
)
def test_r15_lifeguard_moves_one_field_per_lifeguard_face(start: str, steps: int, end: str) -> None:
    s = edit(setup(2), lifeguard=start)
    colours = ["green", "purple", "yellow", "red", "blue", "green"][: 6 - steps]
    s = roll(s, " ".join(colours + ["lifeguard"] * steps))
    assert to_snapshot(s)["lifeguard"] == end
    assert advance(parse_track(start), steps) == parse_track(end)


def test_r15_lifeguard_keeps_blocking_until_he_moves_again() -> None:
    s = edit(setup(2), lifeguard="yellow")
    s = turn(s, "purple purple purple green yellow lifeguard", "pass")  # -> purple
    assert to_snapshot(s)["lifeguard"] == "purple"
    # seat 1's turn: no lifeguard thrown, purple still blocked
    s = roll(s, "purple purple purple purple green green")
    assert s.seat == 1
    assert reach_names(s) == {"green-2a", "green-2b"}


# --------------------------------------------------------------------------- R16-R18: reachability


def test_r16_colours_never_combine() -> None:
    s = roll(setup(2), "green green purple purple yellow yellow")
    assert reach_names(s) == {"green-2a", "green-2b", "purple-2", "yellow-2a", "yellow-2b"}
    s = roll(setup(2), "green green green green purple purple")
    assert not set(FIVE_NAMES) & reach_names(s)


def test_r17_three_purple_reach_purple_2_and_3_not_4() -> None:
    s = roll(setup(2), "purple purple purple red blue green")
    assert reach_names(s) == {"purple-2", "purple-3"}


def test_r17_surplus_dice_are_lost_and_blocked_loungers_are_not_reachable() -> None:
    s = roll(setup(2), "red red red red red red")
    assert reach_names(s) == {"red-2", "red-3", "red-4"} | set(FIVE_NAMES)
    s = roll(edit(setup(2), lifeguard="row4-right"), "red red red red red lifeguard")  # -> row3-right
    assert reach_names(s) == {"red-2", "red-4"} | set(FIVE_NAMES)


def test_r17_r18_exact_reach_for_every_colour_and_count() -> None:
    for colour in COLOURS:
        others = [c for c in COLOURS if c != colour]
        for n in range(7):
            # the other colours get at most one die each, so they reach nothing
            dice = ([colour] * n + others + ["lifeguard"] * 2)[:6]
            s = roll(setup(2), " ".join(dice))
            blocked = {LOUNGERS[i].name for i in blocked_by(advance(DIVING_BOARD, dice.count("lifeguard")))}
            expected = {
                lo.name
                for lo in LOUNGERS
                if not lo.is_five and COLOURS[lo.colour] == colour and lo.value <= n
            } - blocked
            if n >= 5:
                expected |= set(FIVE_NAMES)
            assert reach_names(s) == expected, (colour, n, dice)


def test_r18_five_needs_five_dice_of_one_colour_and_no_towel() -> None:
    s = roll(setup(2), "blue blue blue blue blue green")
    assert set(FIVE_NAMES) <= reach_names(s)
    assert legal_texts(s)[-2:] == ["take-five five-1", "take-five five-2"]
    s = apply(s, "take-five five-1")
    s = roll(s, "yellow yellow yellow yellow yellow yellow")
    assert "five-1" not in reach_names(s) and "five-2" in reach_names(s)
    assert "take-five five-1" not in legal_texts(s)
    with pytest.raises(IllegalActionError, match="taken"):
        apply(s, "take-five five-1")


@pytest.mark.parametrize("field", ["diving-board", *TRACK_ORDER])
def test_r6_r18_five_loungers_are_never_blocked(field: str) -> None:
    s = roll(edit(setup(2), lifeguard=field), "purple purple purple purple purple yellow")
    assert set(FIVE_NAMES) <= reach_names(s)


# --------------------------------------------------------------------------- R19-R24: actions


def test_r19_flip_own_plain_towel_secures_it() -> None:
    s = roll(setup(2), "yellow yellow yellow green purple red")
    # yellow-3b and yellow-2b are seat 0's, yellow-3a and yellow-2a seat 1's
    assert legal_texts(s) == [
        "pass",
        "invade yellow-3a",
        "flip yellow-3b",
        "invade yellow-2a",
        "flip yellow-2b",
    ]
    after = apply(s, "flip yellow-3b")
    i = lid("yellow-3b")
    assert after.secured[i] and after.towel[i] == 0 and after.figure[i] == -1
    assert after.occupied == s.occupied + 1
    assert scores(after) == (3, 0)
    assert after.chips == s.chips and after.pool == s.pool and after.towels == s.towels


def test_r19_r24_flip_not_on_secured_foreign_or_invaded_towels() -> None:
    s = turn(setup(2), "yellow yellow yellow green purple red", "flip yellow-3b")
    # seat 1 invades seat 0's yellow-2b, seat 0 then cannot flip it (RECLAIM instead)
    s = turn(s, "yellow yellow green purple red blue", "invade yellow-2b")
    s = roll(s, "yellow yellow yellow green purple red")
    texts = legal_texts(s)
    assert "flip yellow-3b" not in texts  # secured (R24)
    assert "flip yellow-2b" not in texts and "reclaim yellow-2b" in texts
    assert "flip yellow-3a" not in texts  # seat 1's towel
    for bad in ("flip yellow-3b", "flip yellow-2b", "flip yellow-3a"):
        with pytest.raises(IllegalActionError):
            apply(s, bad)


def test_r20_reclaim_sends_the_figure_home_and_secures_the_towel() -> None:
    s = turn(setup(2), NO_GUARD_6, "pass")
    s = turn(s, "yellow yellow green purple red blue", "invade yellow-2b")  # seat 1
    assert s.figures == (5, 4)
    s = roll(s, "yellow yellow red green green blue")
    assert "reclaim yellow-2b" in legal_texts(s)
    after = apply(s, "reclaim yellow-2b")
    i = lid("yellow-2b")
    assert (after.towel[i], after.secured[i], after.figure[i]) == (0, True, -1)
    assert after.figures == (5, 5)
    assert after.occupied == s.occupied  # it was occupied by the figure already
    assert after.chips == s.chips and after.pool == s.pool


def test_r21_invade_gains_two_chips_and_puts_a_figure() -> None:
    s = roll(setup(2), "red red green purple yellow blue")
    assert legal_texts(s) == ["pass", "invade red-2"]
    after = apply(s, "invade red-2")
    i = lid("red-2")
    assert (after.towel[i], after.secured[i], after.figure[i]) == (1, False, 0)
    assert after.figures == (4, 5)
    assert after.chips == (2, 0) and after.pool == 14
    assert after.occupied == s.occupied + 1
    assert scores(after) == (2, 0)  # 1 for the figure, 1 for two chips


@pytest.mark.parametrize(
    ("held", "pool", "gain"),
    [(0, 16, 2), (1, 15, 2), (2, 14, 2), (3, 13, 1), (4, 12, 0), (0, 1, 1), (0, 0, 0), (3, 1, 1)],
)
def test_r21_invade_gains_two_chips_capped_at_four_and_by_the_pool(held: int, pool: int, gain: int) -> None:
    s = edit(setup(2), chips=[held, 0], pool=pool)
    s = turn(s, "red red green purple yellow blue", "invade red-2")
    assert s.chips == (held + gain, 0)
    assert s.pool == pool - gain


def test_r21_invade_needs_a_figure_in_supply() -> None:
    s = edit(setup(2), figures=[0, 5])
    s = roll(s, "red red green purple yellow blue")
    assert legal_texts(s) == ["pass"]
    with pytest.raises(IllegalActionError, match="no figure"):
        apply(s, "invade red-2")


def test_r21_r24_invade_never_on_own_secured_or_already_invaded_towels() -> None:
    s = turn(setup(2), "red red green purple yellow blue", "invade red-2")
    # seat 1: may invade seat 0's plain towels, not its own
    s = roll(s, "green green green purple yellow red")
    assert "invade green-2a" in legal_texts(s) and "invade green-2b" not in legal_texts(s)
    s = apply(s, "flip green-2b")
    # seat 0: green-2b is secured, green-2a own: no invasion anywhere in green
    s = roll(s, "green green green green purple purple")
    texts = legal_texts(s)
    assert "invade green-2b" not in texts and "invade green-2a" not in texts
    assert "invade green-3b" in texts and "invade green-4b" in texts
    for bad in ("invade green-2b", "invade green-2a", "invade five-1"):
        with pytest.raises(IllegalActionError):
            apply(s, bad)


def test_r22_conquer_replaces_their_towel_with_mine() -> None:
    s = turn(setup(2), "red red green purple yellow blue", "invade red-2")
    s = turn(s, NO_GUARD_6, "pass")
    s = roll(s, "red red red green purple yellow")
    assert legal_texts(s) == ["pass", "invade red-3", "conquer red-2"]
    after = apply(s, "conquer red-2")
    i = lid("red-2")
    assert (after.towel[i], after.secured[i], after.figure[i]) == (0, True, -1)
    assert after.towels == (s.towels[0] - 1, s.towels[1] + 1)
    assert after.figures == (5, 5)
    assert after.chips == s.chips and after.pool == s.pool
    assert after.occupied == s.occupied
    assert scores(after) == (2 + 1, 0)


def test_r22_conquer_needs_a_towel_in_supply() -> None:
    s = turn(setup(2), "red red green purple yellow blue", "invade red-2")
    s = turn(s, NO_GUARD_6, "pass")
    s = edit(s, towels=[0, 4])
    s = roll(s, "red red green purple yellow blue")
    assert legal_texts(s) == ["pass"]
    with pytest.raises(IllegalActionError, match="no towel"):
        apply(s, "conquer red-2")


def test_r22_r24_only_the_figure_owner_conquers_and_only_the_towel_owner_reclaims() -> None:
    # three players: seat 0 invades seat 1's green-4b; seat 2 can do nothing there
    s = setup(3)
    assert name_owner(s)["green-4b"] == 1 and name_owner(s)["green-3a"] == 2
    s = turn(s, "green green green green purple yellow", "invade green-4b")
    s = turn(s, NO_GUARD_6, "pass")
    s = roll(s, "green green green green purple yellow")  # seat 2
    texts = legal_texts(s)
    assert not any(t.endswith(" green-4b") for t in texts)
    for bad in ("conquer green-4b", "reclaim green-4b", "invade green-4b", "flip green-4b"):
        with pytest.raises(IllegalActionError):
            apply(s, bad)
    s = apply(s, "pass")
    s = roll(s, "green green green green purple yellow")  # seat 0 again
    assert "conquer green-4b" in legal_texts(s)


def test_r23_take_five_puts_a_secured_towel_on_the_five() -> None:
    s = roll(setup(2), "green green green green green purple")
    after = apply(s, "take-five five-2")
    i = lid("five-2")
    assert (after.towel[i], after.secured[i], after.figure[i]) == (0, True, -1)
    assert after.towels == (s.towels[0] - 1, s.towels[1])
    assert after.occupied == s.occupied + 1
    assert after.chips == s.chips and after.pool == s.pool
    assert scores(after) == (5, 0)


def test_r23_take_five_needs_a_towel_in_supply() -> None:
    s = edit(setup(2), towels=[0, 4])
    s = roll(s, "green green green green green purple")
    assert not any(t.startswith("take-five") for t in legal_texts(s))
    with pytest.raises(IllegalActionError, match="no towel"):
        apply(s, "take-five five-1")


def test_r24_nothing_on_a_secured_lounger_for_anyone() -> None:
    s = turn(setup(2), "purple purple purple purple green yellow", "flip purple-4")
    s = turn(s, "green green yellow yellow red red", "pass")
    s = roll(s, "purple purple purple purple green yellow")  # seat 0 again
    assert not any(t.endswith("purple-4") for t in legal_texts(s))
    s = apply(s, "pass")
    s = roll(s, "purple purple purple purple green yellow")  # seat 1
    assert not any(t.endswith("purple-4") for t in legal_texts(s))
    with pytest.raises(IllegalActionError, match="secured"):
        apply(s, "invade purple-4")


def test_r24_only_invade_yields_chips() -> None:
    s = setup(2)
    chips = []
    for text, action in [
        ("red red green purple yellow blue", "invade red-2"),  # seat 0: +2
        ("green green green green green green", "take-five five-1"),  # seat 1
        ("red red red green purple yellow", "conquer red-2"),  # seat 0
        ("yellow yellow yellow green purple red", "flip yellow-3a"),  # seat 1
        ("blue blue green purple yellow red", "flip blue-2a"),  # seat 0
        ("blue blue green purple yellow red", "invade blue-2a"),  # seat 1: secured, illegal
    ]:
        st = roll(s, text)
        if action not in legal_texts(st):
            assert action == "invade blue-2a"
            s = apply(st, "pass")
        else:
            s = apply(st, action)
        chips.append((s.chips, s.pool))
    assert chips == [((2, 0), 14)] * 6


# --------------------------------------------------------------------------- R25, R26: the end


def _three_player_near_end():
    """Three players at the start of seat 1's turn with 5 loungers unoccupied:
    five-1, five-2, green-4b (seat 1), red-2 (seat 0), blue-2b (seat 2)."""
    s = setup(3)
    s = turn(s, NO_GUARD_6, "pass")  # seat 0
    free = {"green-4b", "red-2", "blue-2b"}
    s = edit(s, loungers={n: {"side": "guest"} for n in REGULAR_NAMES if n not in free})
    assert s.unoccupied == 5 and s.seat == 1 and not s.final_round
    return s


def test_r25_game_ends_at_the_end_of_the_round_in_which_4_remain() -> None:
    s = _three_player_near_end()
    s = turn(s, "green green green green purple yellow", "flip green-4b")  # seat 1
    assert s.unoccupied == 4 and s.final_round
    assert (s.phase, s.seat, s.round) == (Phase.THROW, 2, 1)
    assert to_snapshot(s)["final_round"] is True
    assert from_snapshot(to_snapshot(s)) == s
    s = turn(s, NO_GUARD_6, "pass")  # seat 2's last turn
    assert s.phase == Phase.OVER and s.termination == "normal"
    assert legal_actions(s) == ()
    with pytest.raises(IllegalThrowError):
        apply_throw(s, faces(NO_GUARD_6))


def test_r25_trigger_by_the_last_seat_ends_immediately() -> None:
    s = _three_player_near_end()
    s = turn(s, NO_GUARD_6, "pass")  # seat 1
    assert not s.final_round
    s = turn(s, "blue blue green purple yellow red", "flip blue-2b")  # seat 2
    assert s.unoccupied == 4
    assert s.phase == Phase.OVER and s.termination == "normal" and s.round == 1


def test_r25_empty_five_counts_as_unoccupied_and_figures_occupy() -> None:
    s = _three_player_near_end()
    # an invasion occupies too: seat 1 invades seat 0's red-2
    s = turn(s, "red red green purple yellow blue", "invade red-2")
    assert s.unoccupied == 4 and s.final_round
    s = turn(s, "green green green green green purple", "take-five five-1")  # seat 2
    assert s.unoccupied == 3
    assert s.is_over and outcome(s).termination == "normal"


def test_r25_more_than_four_unoccupied_does_not_end() -> None:
    s = _three_player_near_end()
    for _ in range(3):
        s = turn(s, NO_GUARD_6, "pass")
    assert not s.is_over and s.round == 2 and s.seat == 1


def test_r26_round_cap_ends_a_game_of_two_passing_players() -> None:
    s = setup(2)
    for k in range(2 * ROUND_CAP):
        assert not s.is_over
        assert (s.round, s.seat, s.turn) == (k // 2 + 1, k % 2, k + 1)
        s = turn(s, "green green purple purple yellow lifeguard", "pass")
    assert s.is_over
    assert s.termination == "round-cap"
    assert (s.round, s.turn) == (100, 200)
    assert outcome(s).termination == "round-cap"
    assert outcome(s).scores == (0, 0) and outcome(s).placings == (1, 1)
    assert from_snapshot(to_snapshot(s)) == s


def test_r26_r25_end_triggered_in_round_100_is_normal() -> None:
    s = _three_player_near_end()
    s = edit(s, round=100)
    s = turn(s, "green green green green purple yellow", "flip green-4b")
    s = turn(s, NO_GUARD_6, "pass")
    assert s.is_over and s.termination == "normal"


def test_r26_round_99_complete_does_not_end() -> None:
    s = edit(setup(2), round=99)
    s = turn(turn(s, NO_GUARD_6, "pass"), NO_GUARD_6, "pass")
    assert not s.is_over and s.round == 100 and s.seat == 0
    s = turn(turn(s, NO_GUARD_6, "pass"), NO_GUARD_6, "pass")
    assert s.is_over and s.termination == "round-cap"


# --------------------------------------------------------------------------- R27, R28: scoring


def test_r27_scoring_values_figures_and_half_chips() -> None:
    s = setup(3)
    s = edit(
        s,
        loungers={
            "green-4a": {"side": "guest"},  # seat 0: 4
            "yellow-4a": {"side": "guest"},  # seat 0: 4
            "five-1": {"towel": 0, "side": "guest"},  # seat 0: 5
            "green-4b": {"figure": 2},  # seat 1's plain towel, seat 2's figure: 1 for seat 2
            "purple-4": {"figure": 1},  # seat 2's plain towel, seat 1's figure: 1 for seat 1
            "green-3b": {"figure": 1},  # seat 0's plain towel, seat 1's figure: 1 for seat 1
            "purple-3": {"side": "guest"},  # seat 1: 3
            "five-2": {"towel": 2, "side": "guest"},  # seat 2: 5
        },
        chips=[3, 4, 1],
        pool=8,
    )
    # plain towels score nothing; chips // 2
    assert scores(s) == (4 + 4 + 5 + 1, 3 + 1 + 1 + 2, 1 + 5 + 0)


def test_r27_scores_at_start_are_zero() -> None:
    for n in (2, 3, 4):
        assert scores(setup(n)) == (0,) * n


@pytest.mark.parametrize(
    ("points", "places"),
    [
        ((9, 9, 5), (1, 1, 3)),
        ((5, 9, 9), (3, 1, 1)),
        ((7, 7), (1, 1)),
        ((3, 8), (2, 1)),
        ((1, 2, 3, 4), (4, 3, 2, 1)),
        ((4, 4, 4, 4), (1, 1, 1, 1)),
        ((10, 6, 6, 2), (1, 2, 2, 4)),
    ],
)
def test_r28_competition_ranking(points: tuple[int, ...], places: tuple[int, ...]) -> None:
    assert placings(points) == places


def test_r28_outcome_only_for_a_finished_game() -> None:
    with pytest.raises(ValueError):
        outcome(setup(2))


def test_all_names_cover_every_lounger() -> None:
    """R3: helper sanity, every lounger name appears once."""
    assert sorted(ALL_NAMES) == sorted(lo.name for lo in LOUNGERS)
    assert count_occupied(setup(2)) == 0
