"""The seven worked checks of docs/rules.md §7, one test each.

Two-player default setup (see test_rules.py): in every row v, seat 0 owns green-va, purple-v,
yellow-vb, blue-va and seat 1 owns green-vb, yellow-va, red-v, blue-vb.
"""

from __future__ import annotations

import pytest
from engine_helpers import (
    NO_GUARD_6,
    REGULAR_NAMES,
    edit,
    legal_texts,
    lid,
    reach_names,
    roll,
    setup,
    throw,
    turn,
)

from arena.engine import (
    LIFEGUARD,
    IllegalActionError,
    Phase,
    apply,
    legal_actions,
    outcome,
    scores,
    to_snapshot,
)


@pytest.mark.parametrize(
    ("guard_before", "guard_after", "reached"),
    [
        ("diving-board", "row4-right", {"purple-2", "purple-3"}),
        ("row4-left", "row4-right", {"purple-2", "purple-3"}),
        ("row4-right", "row3-right", {"purple-2"}),
        ("row3-right", "row2-right", {"purple-3"}),
        ("yellow", "purple", set()),
        ("purple", "green", {"purple-2", "purple-3"}),
    ],
)
def test_check1_three_purple_reach_purple_2_and_3_unless_blocked(
    guard_before: str, guard_after: str, reached: set[str]
) -> None:
    """§7.1 (R15-R17): purple x3, green, yellow, lifeguard."""
    s = edit(setup(2), lifeguard=guard_before)
    s = roll(s, "purple purple purple green yellow lifeguard")
    assert s.result == (1, 3, 1, 0, 0, 1)
    assert to_snapshot(s)["lifeguard"] == guard_after  # one step
    assert reach_names(s) == reached  # never purple-4; green and yellow reach nothing
    assert legal_texts(s) == ["pass"] + [f"flip {n}" for n in ("purple-3", "purple-2") if n in reached]


def test_check2_two_lifeguards_kept_automatically_and_ten_keeps() -> None:
    """§7.2 (R11-R13): throw [lifeguard, green, green, red, lifeguard, yellow]."""
    keeps = {
        "keep green=1",
        "keep green=2",
        "keep yellow=1",
        "keep red=1",
        "keep green=1,yellow=1",
        "keep green=2,yellow=1",
        "keep green=1,red=1",
        "keep green=2,red=1",
        "keep yellow=1,red=1",
        "keep green=1,yellow=1,red=1",
    }
    s = throw(setup(2), "lifeguard green green red lifeguard yellow")
    texts = legal_texts(s)
    assert texts[0] == "stop" and "chip" not in texts
    assert set(texts[1:]) == keeps and len(texts) == 11
    with pytest.raises(IllegalActionError):
        apply(s, "keep green=2,yellow=1,red=1")  # all four colour dice: that is STOP
    for k in sorted(keeps):
        after = apply(s, k)
        assert after.kept[LIFEGUARD] == 2
        assert after.dice == 4 - sum(after.kept[:5])
        assert after.phase == Phase.THROW
    # with a chip, CHIP is legal too
    s = throw(edit(setup(2), chips=[1, 0], pool=15), "lifeguard green green red lifeguard yellow")
    texts = legal_texts(s)
    assert texts[:2] == ["stop", "chip"] and set(texts[2:]) == keeps


def test_check3_chip_rethrows_all_four_and_cancelled_lifeguard_never_moves_him() -> None:
    """§7.3 (R11, R12, R14): kept [purple, purple], last throw [lifeguard, green, yellow, red]."""
    s = edit(setup(2), chips=[1, 0], pool=15)
    s = throw(s, "purple purple green yellow red blue")
    s = apply(s, "keep purple=2")
    s = throw(s, "lifeguard green yellow red")
    assert "chip" in legal_texts(s)
    s = apply(s, "chip")
    assert s.dice == 4  # all four, the lifeguard too
    assert s.kept == (0, 2, 0, 0, 0, 0)  # the two purples stay
    assert (s.chips, s.pool) == ((0, 0), 16)
    s = throw(s, "green green green blue")
    assert legal_texts(s)[:1] == ["stop"] and "chip" not in legal_texts(s)
    s = apply(s, "stop")
    assert s.result == (3, 2, 0, 0, 1, 0)
    assert to_snapshot(s)["lifeguard"] == "diving-board"
    assert reach_names(s) == {"green-3a", "green-3b", "green-2a", "green-2b", "purple-2"}


@pytest.mark.parametrize(
    ("players", "chips", "pool", "after_chips", "after_pool"),
    [
        (2, [3, 0], 13, [4, 0], 12),  # 3 chips: gains 1
        (2, [4, 0], 12, [4, 0], 12),  # 4 chips: gains none
        (4, [3, 4, 4, 4], 1, [4, 4, 4, 4], 0),  # pool holding 1 (and 3 held): gains 1
        (2, [0, 0], 1, [1, 0], 0),  # pool holding 1 alone limits the gain (pool edited)
    ],
)
def test_check4_invade_gains_at_most_to_four_and_at_most_the_pool(
    players: int, chips: list[int], pool: int, after_chips: list[int], after_pool: int
) -> None:
    """§7.4 (R21)."""
    s = edit(setup(players), chips=chips, pool=pool)
    s = roll(s, "red red red red green purple")  # red loungers are never seat 0's here
    assert s.towel[lid("red-4")] != 0
    s = apply(s, "invade red-4")
    assert list(s.chips) == after_chips and s.pool == after_pool
    assert s.figure[lid("red-4")] == 0


def test_check5_reclaim_sends_figure_home_and_secures_my_towel() -> None:
    """§7.5 (R20): another player's figure on my plain yellow 3."""
    s = turn(setup(2), NO_GUARD_6, "pass")  # seat 0
    s = turn(s, "yellow yellow yellow green purple red", "invade yellow-3b")  # seat 1 on seat 0's
    i = lid("yellow-3b")
    assert (s.towel[i], s.figure[i], s.secured[i]) == (0, 1, False)
    before = scores(s)
    assert before == (0, 1 + 1)  # seat 1: the figure and two chips
    s = roll(s, "yellow yellow yellow purple purple red")  # seat 0 reaches it
    assert "reclaim yellow-3b" in legal_texts(s)
    s = apply(s, "reclaim yellow-3b")
    assert (s.towel[i], s.figure[i], s.secured[i]) == (0, -1, True)
    assert s.figures == (5, 5)
    assert scores(s) == (before[0] + 3, before[1] - 1)


def test_check6_conquer_replaces_their_towel_with_mine() -> None:
    """§7.6 (R22): my figure on another player's plain green 2, reached on a later turn."""
    s = turn(setup(2), "green green red red blue blue", "invade green-2b")  # seat 0 on seat 1's
    i = lid("green-2b")
    assert (s.towel[i], s.figure[i]) == (1, 0)
    s = turn(s, NO_GUARD_6, "pass")  # seat 1
    figure_points = scores(s)[0] - s.chips[0] // 2
    assert figure_points == 1
    s = roll(s, "green green purple yellow red blue")  # seat 0 again
    assert "conquer green-2b" in legal_texts(s)
    towels = s.towels
    s = apply(s, "conquer green-2b")
    assert (s.towel[i], s.secured[i], s.figure[i]) == (0, True, -1)
    assert s.towels == (towels[0] - 1, towels[1] + 1)
    assert s.figures == (5, 5)
    assert scores(s)[0] - s.chips[0] // 2 == 2  # 2 points instead of 1


def test_check7_three_players_end_after_seat_2_turn_when_seat_1_reaches_four() -> None:
    """§7.7 (R25): the unoccupied count reaches 4 during seat 1's turn."""
    s = setup(3)
    s = turn(s, NO_GUARD_6, "pass")  # seat 0, round 1
    free = {"green-4b", "red-2", "blue-2b"}  # with the two fives: 5 unoccupied
    s = edit(s, loungers={n: {"side": "guest"} for n in REGULAR_NAMES if n not in free})
    assert s.unoccupied == 5 and s.seat == 1
    s = turn(s, "green green green green purple yellow", "flip green-4b")  # seat 1
    assert s.unoccupied == 4
    assert not s.is_over and s.seat == 2 and s.phase == Phase.THROW and s.round == 1
    s = roll(s, "blue blue green purple yellow red")  # seat 2 plays one more turn
    assert "flip blue-2b" in legal_texts(s)
    s = apply(s, "flip blue-2b")
    assert s.is_over and legal_actions(s) == ()
    assert s.turn == 3 and s.round == 1  # every seat had one turn
    res = outcome(s)
    assert res.termination == "normal"
    assert res.scores == scores(s)
