"""The search's setup placement (R8): the value preference, spread over the values it holds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arena.engine import Action, ActionKind, Phase, apply, new_game, parse_action
from arena.strength.search import Params, SearchPolicy
from strength.helpers import placed

# Four players: seat 0 (the search) took two 3s while the others took six 4s; blue-4a and
# blue-4b are the last free 4s, every 3 but the two green ones is still free.
TWO_THREES = placed(
    4,
    "green-3a", "green-4a", "green-4b", "purple-4",
    "green-3b", "yellow-4a", "yellow-4b", "red-4",
)  # fmt: skip


def test_rows_spreads_the_placements_over_the_values() -> None:
    """``Params.rows`` (an option, off by default): with two 3s already, one of the last 4s
    comes before a third 3; without it the plain preference (3s first) takes a third 3."""
    assert TWO_THREES.phase == Phase.SETUP and TWO_THREES.seat == 0
    default = Params.for_players(4)
    assert default.rows == 0
    assert SearchPolicy(default).choose(TWO_THREES) == parse_action("place purple-3")
    spread = replace(default, rows=0.5)
    assert SearchPolicy(spread).choose(TWO_THREES) == parse_action("place blue-4a")


def test_colour_rules_and_the_learned_setup_value() -> None:
    """``rival`` steers away from (negative) or towards the colours the others hold, ``wide``
    towards the two-wide colours (R3), ``setup_net`` adds the learned value of the state after
    the placement: each changes the choice in a position where the plain preference is a tie
    broken by position (the leftmost 3)."""
    default = Params.for_players(4)
    plain = SearchPolicy(default).choose(TWO_THREES)
    avoid = SearchPolicy(replace(default, rival=-0.4)).choose(TWO_THREES)
    assert plain == parse_action("place purple-3")
    # purple carries another's towel (purple-4), blue none: the first blue 3
    assert avoid == parse_action("place blue-3a")
    # purple is one lounger wide, yellow two (R3): the first free two-wide 3
    assert SearchPolicy(replace(default, wide=0.5)).choose(TWO_THREES) == parse_action("place yellow-3a")
    values = SearchPolicy(replace(default, setup_net=4.0)).setup_values(TWO_THREES)
    base = SearchPolicy(default).setup_values(TWO_THREES)
    assert set(values) == set(base) and any(abs(values[a] - base[a]) > 1e-6 for a in base)


def test_the_first_placement_is_a_three() -> None:
    """Nothing held yet: the preference by value alone (3s first), the leftmost within a value."""
    for players in (2, 3, 4):
        assert SearchPolicy().choose(new_game(players)) == parse_action("place green-3a")


def test_setup_is_deterministic_and_legal() -> None:
    """A whole setup of search players: every placement legal, the same twice."""

    def setup_of(players: int) -> list[Action]:
        s = new_game(players)
        policy = SearchPolicy()
        out = []
        while s.phase == Phase.SETUP:
            a = policy.choose(s)
            assert a.kind == ActionKind.PLACE
            out.append(a)
            s = apply(s, a)
        return out

    for players in (2, 4):
        first = setup_of(players)
        assert len(first) == 24 and first == setup_of(players)


def test_a_preference_per_colour_and_value_replaces_the_one_by_value() -> None:
    """``Params.setup_class`` (an option, off by default): one preference per colour and value
    (index colour * 3 + value - 2); the highest free class is laid, the leftmost within it."""
    default = Params.for_players(4)
    assert default.setup_class == ()
    table = [0.0] * 15
    table[4 * 3 + 4 - 2] = 5.0  # blue 4s first
    table[1 * 3 + 3 - 2] = 4.0  # then the purple 3
    first = SearchPolicy(replace(default, setup_class=tuple(table)))
    assert first.choose(TWO_THREES) == parse_action("place blue-4a")
    table[4 * 3 + 4 - 2] = 0.0
    assert SearchPolicy(replace(default, setup_class=tuple(table))).choose(TWO_THREES) == parse_action(
        "place purple-3"
    )
    # the default's order by value, written per class, makes the same choices
    by_value = tuple(default.setup[v] for _ in range(5) for v in (2, 3, 4))
    assert SearchPolicy(replace(default, setup_class=by_value)).choose(TWO_THREES) == SearchPolicy(
        default
    ).choose(TWO_THREES)


def test_a_preference_table_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="one preference per colour and value"):
        Params(setup_class=(1.0, 2.0))


def test_a_preference_by_value_of_the_wrong_size_is_refused() -> None:
    """``setup=1,2`` (or one number) failed at the first placement with an IndexError traceback."""
    for bad in ((1.0, 2.0), 5.0):
        with pytest.raises(ValueError, match="one preference per value"):
            Params(setup=bad)  # type: ignore[arg-type]
