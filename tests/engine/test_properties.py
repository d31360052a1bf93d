"""Property tests of the invariants of docs/rules.md §4 after every step of random games.

Hypothesis draws the match seed and a random/greedy mix of policies; the game is played with the
dice stream (§5) and recorded, and every state is checked.
"""

from __future__ import annotations

import pytest
from engine_helpers import count_occupied
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine import (
    LOUNGERS,
    DiceStream,
    Phase,
    RecordWriter,
    State,
    apply,
    apply_throw,
    from_snapshot,
    legal_actions,
    make_policy,
    new_game,
    outcome,
    placings,
    replay,
    scores,
    to_snapshot,
)

REGULAR = [lo.id for lo in LOUNGERS if not lo.is_five]
FIVES = [lo.id for lo in LOUNGERS if lo.is_five]

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def check_state(s: State) -> None:
    """Every §4 invariant that a single state must satisfy."""
    n = s.players
    # R5: chips in pool + chips held = 16; every player holds 0..4
    assert s.pool + sum(s.chips) == 16
    assert all(0 <= c <= 4 for c in s.chips)
    assert 0 <= s.pool <= 16
    # R4: figures on the board + in supply = 5, towels on the board + in supply = 16
    for seat in range(n):
        assert sum(1 for f in s.figure if f == seat) + s.figures[seat] == 5
        assert sum(1 for t in s.towel if t == seat) + s.towels[seat] == 16
        assert s.figures[seat] >= 0 and s.towels[seat] >= 0
    # R8: after setup every regular lounger has exactly one towel
    if s.phase != Phase.SETUP:
        assert all(s.towel[i] in range(n) for i in REGULAR)
    else:
        placed = sum(1 for i in REGULAR if s.towel[i] >= 0)
        assert placed == 24 - sum(1 for i in REGULAR if s.towel[i] < 0)
        assert s.seat == placed % n
        assert not any(s.secured) and all(f < 0 for f in s.figure)
    # a five-lounger has none or one towel and never a figure; a towel on it is secured (R23)
    for i in FIVES:
        assert s.figure[i] == -1
        assert s.towel[i] in range(-1, n)
        assert s.secured[i] == (s.towel[i] >= 0)
    # a figure lies only on a plain towel of another player (R21, R24)
    for i, fig in enumerate(s.figure):
        if fig >= 0:
            assert s.towel[i] >= 0 and s.towel[i] != fig and not s.secured[i]
        if s.secured[i]:
            assert s.towel[i] >= 0
    # the cached count agrees with the board
    assert s.occupied == count_occupied(s)
    # the snapshot round trip is exact
    assert from_snapshot(to_snapshot(s)) == s
    assert to_snapshot(from_snapshot(to_snapshot(s))) == to_snapshot(s)


def play_checked(seed: int, names: list[str]) -> None:
    players = len(names)
    policies = [make_policy(name, seed, seat) for seat, name in enumerate(names)]
    dice = DiceStream(seed)
    writer = RecordWriter(players, seed)
    s = new_game(players)
    states = [s]
    check_state(s)
    while not s.is_over:
        if s.is_chance:
            assert legal_actions(s) == ()
            f = dice.throw(s.turn, s.throw_no + 1, s.dice)
            writer.throw(f)
            nxt = apply_throw(s, f)
            assert nxt.occupied == s.occupied
        else:
            legal = legal_actions(s)
            assert legal, "no legal action at a decision"
            assert len(set(legal)) == len(legal)
            key = s.key()
            successors = [apply(s, a) for a in legal]  # every legal action applies
            assert s.key() == key
            action = policies[s.seat].choose(s)
            assert action in legal
            writer.decision(s, action)
            nxt = successors[legal.index(action)]
            assert nxt == apply(s, action)
            for succ in successors:
                # one action raises the occupied count by at most 1, never lowers it (R25)
                assert 0 <= succ.occupied - s.occupied <= 1
        assert nxt.occupied >= s.occupied
        check_state(nxt)
        s = nxt
        states.append(s)
    writer.finish(s)
    # R25, R26: the game ends after a complete round, every seat had as many turns
    assert s.turn == s.round * players
    assert s.termination in ("normal", "round-cap")
    if s.termination == "normal":
        assert s.unoccupied <= 4
    else:
        assert s.round == 100 and s.unoccupied > 4
    res = outcome(s)
    assert res.scores == scores(s) and res.placings == placings(res.scores)
    # replaying the record reproduces every state exactly
    rep = replay(writer.text())
    assert rep.states == states
    assert [x.key() for x in rep.states] == [x.key() for x in states]
    assert rep.result["scores"] == list(res.scores)


seeds = st.integers(min_value=0, max_value=2**63 - 1)


@pytest.mark.parametrize("players", [2, 3, 4])
@SETTINGS
@given(seed=seeds, data=st.data())
def test_section4_invariants_after_every_step(players: int, seed: int, data: st.DataObject) -> None:
    names = data.draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=players, max_size=players))
    play_checked(seed, names)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("mix", ["random", "greedy", "mixed"])
def test_section4_invariants_fixed_games(players: int, mix: str) -> None:
    """The same checks on fixed games, so every mix is covered whatever Hypothesis draws."""
    names = {
        "random": ["random"] * players,
        "greedy": ["greedy"] * players,
        "mixed": ["greedy", "random", "greedy", "random"][:players],
    }[mix]
    play_checked(1000 + players, names)
