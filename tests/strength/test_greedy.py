"""The one-ply greedy (arena/strength/greedy.py): exact throw probabilities, hand-checked worths
and rolling values (rules R11-R23), determinism, and its edge over the naive greedy."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest

from arena.engine import (
    ActionKind,
    GreedyPolicy,
    Phase,
    State,
    apply,
    apply_throw,
    legal_actions,
    parse_action,
    throw_distribution,
)
from arena.engine.board import FACES, N_COLOURS
from arena.strength.dice import count_of, throw_outcomes
from arena.strength.duel import duel, factory
from arena.strength.greedy import OnePlyGreedy
from arena.strength.rolling import Leaves, one_ply
from arena.strength.worth import points_now
from strength.helpers import after_setup, edit, secure_all_but


def faces(text: str) -> tuple[int, ...]:
    return tuple(FACES.index(n) for n in text.split())


def rolled(state: State, *steps: str) -> State:
    """Apply throws (``"throw green red ..."``) and rolling actions (``"keep green=2"``) in turn."""
    for step in steps:
        state = apply_throw(state, faces(step[6:])) if step.startswith("throw ") else apply(state, step)
    return state


@pytest.mark.parametrize("k", range(1, 7))
def test_throw_outcomes_are_the_exact_multinomial(k: int) -> None:
    """R1: six equally likely faces per die; the outcomes of k dice are the C(k+5, 5) multisets,
    their probabilities sum to 1 (exactly, as fractions; to rounding as floats)."""
    exact = throw_distribution(k)
    assert len(exact) == comb(k + 5, 5)
    assert sum(p for _, p in exact) == Fraction(1)
    outs = throw_outcomes(k)
    assert len(outs) == len(exact)
    assert sum(p for _, _, p, _ in outs) == pytest.approx(1.0, abs=1e-12)
    for (code, lifeguards, p, keeps), (counts, q) in zip(outs, exact, strict=True):
        assert [count_of(code, f) for f in range(6)] == list(counts)
        assert count_of(lifeguards, 5) == counts[5] and p == pytest.approx(float(q))
        n_colour = sum(counts[:N_COLOURS])
        # R12/R13: a KEEP sets aside 1..n-1 of the n colour dice; the lifeguards never count
        expected = 1
        for c in counts[:N_COLOURS]:
            expected *= c + 1
        assert len(keeps) == (expected - 2 if n_colour >= 2 else 0)
        assert all(0 < left < n_colour for _, left in keeps)


def test_action_worths_points_now_two_players() -> None:
    """R19-R23 in 2 players: FLIP v, RECLAIM v + the intruder's point, INVADE the figure's point
    plus the chips' points, CONQUER v - 1, TAKE_FIVE 5."""
    # seat 0 owns the even ids (after_setup), seat 1 the odd ones
    s = edit(
        after_setup(2),
        {"yellow-3b": {"figure": 1}, "green-3b": {"figure": 0}},  # 12: mine+theirs; 9: theirs+mine
        figures=[4, 4],
        chips=[3, 0],
        pool=13,
    )
    w = points_now(s)
    assert w.action_worth(parse_action("flip green-4a"), 3) == 4.0  # R19
    assert w.action_worth(parse_action("reclaim yellow-3b"), 3) == 3.0 + 1.0  # R20
    assert w.action_worth(parse_action("conquer green-3b"), 3) == 3.0 - 1.0  # R22
    # R21: holding 3 chips an invasion brings 1 (never more than 4 held): 3 -> 4 chips, 1 -> 2 points
    assert w.action_worth(parse_action("invade blue-2b"), 3) == 1.0 + 1.0
    assert w.action_worth(parse_action("invade blue-2b"), 4) == 1.0  # holding 4: no chip
    assert w.action_worth(parse_action("invade blue-2b"), 0) == 1.0 + 1.0  # 0 -> 2 chips: a point
    assert w.action_worth(parse_action("take-five five-1"), 3) == 5.0  # R23
    assert w.action_worth(parse_action("pass"), 3) == 0.0


def test_reclaim_takes_a_third_of_a_point_per_opponent_in_four_players() -> None:
    """R20 with 4 players: the intruder's lost point counts against one of three opponents."""
    s = edit(after_setup(4), {"yellow-4a": {"figure": 2}}, figures=[5, 5, 4, 5])  # id 3 -> seat 3
    s = edit(s, seat=3)
    w = points_now(s)
    assert w.action_worth(parse_action("reclaim yellow-4a"), 0) == pytest.approx(4 + 1 / 3)


def test_one_ply_keep_value_is_the_exact_expectation() -> None:
    """Only purple-4 (mine) is open; three purples are kept and the last throw is green, red, blue.
    STOP reaches nothing (R17: four purples needed).  Keeping one die re-throws two: at least one
    purple with 1 - (5/6)^2 = 11/36, and the lifeguard, from green, can only step to row2-left or
    row3-left, which never block purple-4 (R6, R15); keeping two re-throws one: 1/6."""
    state = secure_all_but(after_setup(2), {"purple-4"})
    state = edit(state, lifeguard="green", chips=[0, 0])
    state = rolled(
        state, "throw purple purple purple green red blue", "keep purple=3", "throw green red blue"
    )
    values = {str(a): v for v, a in OnePlyGreedy.roll_values(state)}
    assert values["stop"] == 0.0
    for keep in ("keep green=1", "keep red=1", "keep blue=1"):
        assert values[keep] == pytest.approx(11 / 36 * 4)
    for keep in ("keep green=1,red=1", "keep green=1,blue=1", "keep red=1,blue=1"):
        assert values[keep] == pytest.approx(4 / 6)
    assert str(OnePlyGreedy().choose(state)) in ("keep green=1", "keep red=1", "keep blue=1")


def test_one_ply_counts_the_lifeguards_move() -> None:
    """Only purple-3 is open; two purples kept, last throw purple, green, lifeguard on yellow.
    STOP flips it (3).  KEEP purple re-throws the green die: its lifeguard face (1/6) walks the
    lifeguard from yellow onto purple, which blocks the purple loungers (R6, R15): 5/6 x 3.
    KEEP green re-throws the purple die: purple again 1/6, else 2 purples: 1/6 x 3."""
    state = secure_all_but(after_setup(2), {"purple-3"})
    state = edit(state, lifeguard="yellow", chips=[0, 0])
    state = rolled(
        state, "throw purple purple red blue green yellow", "keep purple=2,red=1,blue=1", "throw purple green"
    )
    values = {str(a): v for v, a in OnePlyGreedy.roll_values(state)}
    assert values == pytest.approx({"stop": 3.0, "keep purple=1": 2.5, "keep green=1": 0.5})
    assert str(OnePlyGreedy().choose(state)) == "stop"


def test_a_chip_only_for_a_hopeless_throw() -> None:
    """R12/R13: one colour die and five lifeguards offer no KEEP; that throw reaches nothing, so
    the chip re-throws all six dice.  A throw that reaches an own towel is never chipped."""
    base = edit(after_setup(2), chips=[1, 0], pool=15)
    hopeless = apply_throw(base, faces("green lifeguard lifeguard lifeguard lifeguard lifeguard"))
    assert [str(a) for a in legal_actions(hopeless)] == ["stop", "chip"]
    assert OnePlyGreedy().choose(hopeless).kind == ActionKind.CHIP
    useful = apply_throw(base, faces("green green red blue yellow purple"))  # reaches green-2a (mine)
    options = OnePlyGreedy.roll_values(useful)
    assert all(a.kind != ActionKind.CHIP for _, a in options)
    assert OnePlyGreedy().choose(useful).kind != ActionKind.CHIP
    assert any(a.kind == ActionKind.CHIP for a in legal_actions(useful))


def test_one_ply_matches_a_brute_force_over_the_engine() -> None:
    """Each KEEP's one-ply value equals the average, over every throw through the engine, of the
    best action worth the result then reaches (plus the chips' value)."""
    state = edit(after_setup(2), {"red-3": {"figure": 1}}, figures=[5, 4], chips=[2, 0], pool=14)
    state = rolled(state, "throw red red green yellow yellow lifeguard")
    chips = state.chips[0]
    worths = points_now(state)
    options = one_ply(Leaves.of(worths, chips), state.kept, state.last, chips)
    from arena.engine import apply_throw_counts, throw_distribution_float

    for value, action in options:
        after = apply(state, action)
        if action.kind == ActionKind.STOP:
            expected = (
                max(worths.action_worth(a, chips) for a in legal_actions(after)) + worths.chip_value[chips]
            )
        else:
            left = after.chips[0]
            expected = 0.0
            for counts, p in throw_distribution_float(after.dice):
                done = apply(apply_throw_counts(after, counts), "stop")
                best = max(worths.action_worth(a, left) for a in legal_actions(done))
                expected += p * (best + worths.chip_value[left])
        assert value == pytest.approx(expected, abs=1e-9), str(action)


def test_greedy_is_deterministic_and_legal() -> None:
    from arena.engine import play_game

    a = play_game(7, [OnePlyGreedy(), GreedyPolicy()]).record
    b = play_game(7, [OnePlyGreedy(), GreedyPolicy()]).record
    assert a == b
    g = play_game(8, [OnePlyGreedy(), OnePlyGreedy(), OnePlyGreedy()])
    assert g.final.phase == Phase.OVER


def test_beats_the_naive_greedy_with_duplicate_dice() -> None:
    """30 duplicate groups (60 games) in process: the one-ply greedy wins clearly (it measures
    about +190 Elo over 400 games)."""
    s = duel(factory("greedy"), factory("greedy-naive"), 2, 30, seed=4242)
    assert s.share.estimate > 0.6 and s.score_difference.low > 0


def test_the_naive_greedy_is_a_sample_named_greedy_naive() -> None:
    """``greedy-naive`` names bots/greedy_naive_bot.py wherever samples are named (arena match,
    arena evaluate, the demo), and ``greedy`` is the one-ply greedy."""
    from arena.botref import resolve, sample_bots
    from arena.demo import REPO, SAMPLES

    assert resolve("greedy-naive").path == REPO / "bots" / "greedy_naive_bot.py"
    assert {"greedy", "greedy-naive"} <= set(sample_bots()) and "greedy-naive" in SAMPLES
    assert "OnePlyGreedy" in (REPO / "bots" / "greedy_bot.py").read_text()
