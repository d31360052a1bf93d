"""The search's 2-player setup tie-break (two-wide colours first, R3) and its optional risk
attitude (rolling for the result of R28 rather than for points): the utility leaves of the
expectimax, the estimates they start from, and the analysis staying in points."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import pytest

from arena.engine import (
    Phase,
    State,
    apply,
    apply_throw,
    apply_throw_counts,
    legal_actions,
    new_game,
    parse_action,
    throw_distribution_float,
)
from arena.engine.board import FACES, LOUNGER_VALUE, REGULAR
from arena.strength.decisions import decision_values
from arena.strength.rolling import TurnPlanner
from arena.strength.search import Params, RiskAttitude, SearchPolicy
from arena.strength.worth import Potential, Worths
from strength.helpers import after_setup, edit, lid, placed

# Two players: the search (seat 0) took every 3, the other seat every 4 (as the greedy does),
# then the green 2s went; the search is to place its next towel (R8).
THREES_AND_FOURS = placed(
    2,
    "green-3a", "green-4a", "green-3b", "green-4b", "purple-3", "purple-4", "yellow-3a",
    "yellow-4a", "yellow-3b", "yellow-4b", "red-3", "red-4", "blue-3a", "blue-4a", "blue-3b",
    "blue-4b", "green-2a", "green-2b",
)  # fmt: skip


def test_two_players_take_the_two_wide_colours_2s_first() -> None:
    """2 players' default (``wide`` 0.5): among the free 2s a two-wide colour's (yellow-2a)
    before purple-2, the leftmost; without the tie-break the leftmost comes first."""
    assert THREES_AND_FOURS.phase == Phase.SETUP and THREES_AND_FOURS.seat == 0
    default = Params.for_players(2)
    assert default.wide == 0.5 and default.risk == 0
    assert SearchPolicy(default).choose(THREES_AND_FOURS) == parse_action("place yellow-2a")
    plain = replace(default, wide=0.0)
    assert SearchPolicy(plain).choose(THREES_AND_FOURS) == parse_action("place purple-2")
    assert Params.for_players(4).wide == 0  # measured worse in 4 players


def test_estimates_are_the_potential_view_of_the_board() -> None:
    """``Potential.estimates``: an own plain towel is worth ``lam[v] * v`` far from the end (no
    fade), so the FLIP worth is exactly what the flip adds to the owner's estimate (R19)."""
    pot = Potential()
    s = after_setup(2)
    est = pot.estimates(s)
    for seat in (0, 1):
        mine = [i for i in REGULAR if s.towel[i] == seat]
        assert est[seat] == pytest.approx(sum(pot.lam[LOUNGER_VALUE[i]] * LOUNGER_VALUE[i] for i in mine))
    name = "purple-3"
    assert s.towel[lid(name)] == s.seat == 0
    flipped = edit(s, {name: {"side": "guest"}})
    gain = pot.estimates(flipped)[0] - est[0]
    worth = pot.worths(s).acts[lid(name)]
    assert worth is not None and worth[0] == pytest.approx(gain)
    # chips: at least the point per two chips of R27
    for c in range(5):
        assert pot.chip_value(s, c) >= c // 2


def test_the_risk_utility_is_the_chance_to_finish_above() -> None:
    """One opponent, lead d: utility(x) = Phi((d + x) / sigma), 1/2 where the worth closes the
    gap, increasing, within 0..1; with several opponents the mean of the pairwise chances."""
    att = RiskAttitude([-3.0], 2.0)
    assert att.utility(3.0) == pytest.approx(0.5)
    xs = [x / 4 for x in range(-40, 41)]
    us = [att.utility(x) for x in xs]
    assert all(0.0 <= u <= 1.0 for u in us) and us == sorted(us)
    assert att.utility(5.0) == pytest.approx(0.5 * (1 + math.erf(2.0 / (2.0 * math.sqrt(2)))))
    many = RiskAttitude([1.0, -1.0, 4.0], 3.0)
    single = [RiskAttitude([d], 3.0).utility(0.5) for d in (1.0, -1.0, 4.0)]
    assert many.utility(0.5) == pytest.approx(sum(single) / 3)


def brute_force(state: State, w: Worths, utility: Callable[[float], float]) -> float:
    """Expected utility of the best play by plain enumeration through the engine."""
    me = state.seat
    if state.phase == Phase.THROW:
        outcomes = throw_distribution_float(state.dice)
        return sum(p * brute_force(apply_throw_counts(state, c), w, utility) for c, p in outcomes)
    if state.phase == Phase.ACTION:
        chips = state.chips[me]
        return utility(max(w.action_worth(a, chips) for a in legal_actions(state)) + w.chip_value[chips])
    return max(brute_force(apply(state, a), w, utility) for a in legal_actions(state))


@pytest.mark.parametrize(("lead", "chips"), [(-4.0, 1), (3.0, 1), (0.0, 0)])
def test_the_planner_maximises_expected_utility_exactly(lead: float, chips: int) -> None:
    """With a utility the expectimax of every rolling choice equals plain enumeration of the
    utility of each leaf through the engine (R10-R15), chips included."""
    s = after_setup(2)
    s = edit(s, chips=[chips, 0], pool=16 - chips)
    first = ("green", "green", "lifeguard", "red", "blue", "yellow")
    s = apply_throw(s, tuple(FACES.index(f) for f in first))
    s = apply(s, parse_action("keep green=2"))
    s = apply_throw(s, tuple(FACES.index(f) for f in ("green", "red", "lifeguard")))
    assert s.phase == Phase.ROLL
    w = Potential().worths(s)
    att = RiskAttitude([lead], 1.5)
    planner = TurnPlanner(w.table(chips), w.chip_value, att.utility)
    for value, action in planner.decide(s.kept, s.last, chips):
        assert value == pytest.approx(brute_force(apply(s, action), w, att.utility), abs=1e-9), action


def test_risk_changes_choices_and_the_analysis_stays_in_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Params.risk`` (off by default) plays legal moves, deterministically, and does change
    some rolling choices of a game; ``decision_values`` (the replay analysis) stays risk-neutral
    even when the defaults take risk: its values are the points of the risk-neutral search."""
    from arena.engine import DiceStream

    plain = Params.for_players
    neutral = SearchPolicy(plain(2))
    monkeypatch.setattr(Params, "for_players", staticmethod(lambda n: replace(plain(n), risk=1.0)))
    risky = SearchPolicy()
    assert risky.params(new_game(2)).risk == 1.0
    differ = 0
    checked = 0
    for seed in range(3):
        dice = DiceStream(seed)
        s = new_game(2)
        while not s.is_over:
            if s.is_chance:
                s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
                continue
            a = risky.choose(s)
            assert a in legal_actions(s)
            if s.phase == Phase.ROLL:
                differ += a != neutral.choose(s)
                if checked < 20:
                    checked += 1
                    assert SearchPolicy().choose(s) == a  # a fresh player: the same choice
                    points = {act: v for v, act in SearchPolicy(plain(2)).roll_values(s)}
                    assert decision_values(s) == {act: points[act] for act in legal_actions(s)}
            s = apply(s, a)
    assert differ > 0 and checked == 20
