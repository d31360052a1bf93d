"""The search (arena/strength/search.py, bots/search_bot.py): exact expectimax, legality,
determinism without a clock, the leaf-evaluation hook, the last turn, a real match."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable

import pytest

from arena.engine import (
    Action,
    ActionKind,
    Phase,
    RandomPolicy,
    State,
    apply,
    apply_throw,
    apply_throw_counts,
    legal_actions,
    new_game,
    parse_action,
    play_game,
    scores,
    throw_distribution_float,
)
from arena.engine.board import FACES
from arena.engine.chance import DiceStream
from arena.strength.greedy import OnePlyGreedy
from arena.strength.search import (
    LastTurn,
    Params,
    SearchPolicy,
    ValueWorths,
    is_last_turn,
    load_worth_model,
)
from arena.strength.worth import Worths, score_margin
from strength.helpers import after_setup, edit, load_bot_module, secure_all_but


def faces(text: str) -> tuple[int, ...]:
    return tuple(FACES.index(n) for n in text.split())


def rolled(state: State, *steps: str) -> State:
    for step in steps:
        state = apply_throw(state, faces(step[6:])) if step.startswith("throw ") else apply(state, step)
    return state


def brute_force(state: State, w: Worths) -> float:
    """The value of ``state`` by plain enumeration through the engine: every legal rolling
    choice, every throw outcome with its probability, the best legal lounger action at the end."""
    me = state.seat
    if state.phase == Phase.THROW:
        return sum(
            p * brute_force(apply_throw_counts(state, counts), w)
            for counts, p in throw_distribution_float(state.dice)
        )
    if state.phase == Phase.ACTION:
        chips = state.chips[me]
        return max(w.action_worth(a, chips) for a in legal_actions(state)) + w.chip_value[chips]
    assert state.phase == Phase.ROLL
    return max(brute_force(apply(state, a), w) for a in legal_actions(state))


@pytest.mark.parametrize(
    ("guard", "chips", "steps"),
    [
        (
            "blue",
            1,
            ("throw green green lifeguard red blue yellow", "keep green=2", "throw green red lifeguard"),
        ),
        (
            "row3-left",
            2,
            ("throw purple purple purple red red lifeguard", "keep purple=3", "throw red green"),
        ),
        (
            "diving-board",
            1,
            ("throw yellow yellow yellow yellow blue red", "keep yellow=4", "throw blue red"),
        ),
        ("green", 0, ("throw red red red green lifeguard lifeguard", "keep red=3", "throw red")),
    ],
)
def test_expectimax_agrees_with_brute_force(guard: str, chips: int, steps: tuple[str, ...]) -> None:
    """Every rolling choice's value equals a brute-force enumeration over engine states (R10-R18:
    kept dice, lifeguards set aside, CHIP re-throws, the lifeguard's move, reach)."""
    base = edit(
        after_setup(2),
        {"green-3a": {"figure": 1}, "blue-4b": {"figure": 0}, "red-2": {"side": "guest"}},
        lifeguard=guard, chips=[chips, 3], pool=16 - chips - 3, figures=[4, 4],
    )  # fmt: skip
    state = rolled(base, *steps)
    policy = SearchPolicy()
    values = {str(a): v for v, a in policy.roll_values(state)}
    assert set(values) == {str(a) for a in legal_actions(state)}
    w = policy.worths(state)
    for text, value in values.items():
        assert value == pytest.approx(brute_force(apply(state, text), w), abs=1e-9), text


def test_stop_beats_keep_when_a_lifeguard_would_block() -> None:
    """Only purple-3 is open; STOP flips it; KEEP purple re-throws green, whose lifeguard face
    steps the lifeguard from yellow onto purple (R6, R15): 5/6; KEEP green: 1/6."""
    state = secure_all_but(after_setup(2), {"purple-3"})
    state = edit(state, lifeguard="yellow", chips=[0, 0])
    state = rolled(
        state, "throw purple purple red blue green yellow", "keep purple=2,red=1,blue=1", "throw purple green"
    )
    policy = SearchPolicy()
    values = {str(a): v for v, a in policy.roll_values(state)}
    flip = policy.worths(state).action_worth(parse_action("flip purple-3"), 0)
    assert flip > 0
    assert values == pytest.approx({"stop": flip, "keep purple=1": 5 / 6 * flip, "keep green=1": flip / 6})
    assert policy.choose(state) == parse_action("stop")


def test_keep_beats_stop_when_one_more_die_is_needed() -> None:
    """Only purple-4 is open, three purples kept, last throw green red blue: KEEP one die throws
    two (11/36), then, two other colours (16/36), one more single-die try (1/6)."""
    state = secure_all_but(after_setup(2), {"purple-4"})
    state = edit(state, lifeguard="green", chips=[0, 0])
    state = rolled(
        state, "throw purple purple purple green red blue", "keep purple=3", "throw green red blue"
    )
    policy = SearchPolicy()
    values = {str(a): v for v, a in policy.roll_values(state)}
    flip4 = policy.worths(state).action_worth(parse_action("flip purple-4"), 0)
    assert values["stop"] == pytest.approx(0.0)
    for keep in ("keep green=1", "keep red=1", "keep blue=1"):
        assert values[keep] == pytest.approx((11 / 36 + 16 / 36 / 6) * flip4)
    assert str(policy.choose(state)) in ("keep green=1", "keep red=1", "keep blue=1")


def test_always_legal_in_random_positions() -> None:
    policy = SearchPolicy()
    checked = 0
    for players in (2, 3, 4):
        for seed in range(2):
            dice = DiceStream(seed)
            rnd = RandomPolicy(seed)
            state = after_setup(players) if seed else new_game(players)
            steps = 0
            while not state.is_over and steps < 600:
                steps += 1
                if state.is_chance:
                    state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
                    continue
                if steps % 3 == 0:
                    assert policy.choose(state) in legal_actions(state)
                    checked += 1
                state = apply(state, rnd.choose(state))
    assert checked > 150


def test_deterministic_and_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search reads no clock (the same choices on an idle or a loaded machine): a game with
    every clock function broken is the same game, decision for decision."""
    first = play_game(21, [SearchPolicy(), OnePlyGreedy(), SearchPolicy()]).record

    here = threading.get_ident()

    def broken(original: Callable[[], float]) -> Callable[[], float]:
        def clock() -> float:  # broken for this thread only: other tests' background threads
            if threading.get_ident() == here:  # (a Dask loop left running) may still read it
                raise AssertionError("the search read a clock")
            return original()

        return clock

    for name in ("perf_counter", "process_time", "monotonic", "time"):
        monkeypatch.setattr(time, name, broken(getattr(time, name)))
    again = play_game(21, [SearchPolicy(), OnePlyGreedy(), SearchPolicy()]).record
    monkeypatch.undo()
    assert again == first


def test_the_leaf_evaluation_hook_takes_a_state_value() -> None:
    """With the value 'current margin' plugged in, an action's worth is what it scores now
    (R19 FLIP v, R20 RECLAIM v + 1 in two players, R22 CONQUER v - 1, R23 TAKE_FIVE 5)."""
    state = edit(after_setup(2), {"yellow-3b": {"figure": 1}, "green-3b": {"figure": 0}}, figures=[4, 4])
    policy = SearchPolicy(worth_model=ValueWorths(score_margin))
    w = policy.worths(state)
    assert w.action_worth(parse_action("flip green-4a"), 0) == pytest.approx(4)
    assert w.action_worth(parse_action("reclaim yellow-3b"), 0) == pytest.approx(4)
    assert w.action_worth(parse_action("conquer green-3b"), 0) == pytest.approx(2)
    assert w.action_worth(parse_action("take-five five-1"), 0) == pytest.approx(5)
    assert policy.choose(apply_throw(state, faces("green green green green red blue"))) in legal_actions(
        apply_throw(state, faces("green green green green red blue"))
    )
    with pytest.raises(ValueError, match=r"package\.module:name"):
        load_worth_model("no-colon")
    with pytest.raises(ValueError, match="cannot load"):
        load_worth_model("arena.strength.nothing_here:value")
    loaded = load_worth_model("arena.strength.worth:score_margin")  # a state value: wrapped
    assert isinstance(loaded, ValueWorths)
    assert loaded.worths(state).action_worth(parse_action("flip green-4a"), 0) == pytest.approx(4)


def test_the_last_turn_plays_for_the_result() -> None:
    """The game's last turn (R25: the final round, the last seat) values the result, not the
    margin (R27, R28).  Seat 1 trails 31 to 34: a FLIP of its green-4b wins (35-34), a FLIP of its
    green-3b only ties (34-34).  With 10 points per opponent beaten (a tie half) and a hundredth of
    the margin as tie-break, the 4 is worth 10.04 and the 3 is worth 5.03, not 4 and 3."""
    s = secure_all_but(after_setup(2), {"green-4b", "green-3b", "blue-2a"})
    s = edit(s, {"red-4": {"side": "plain"}, "blue-4b": {"side": "plain"}}, seat=1, final_round=True)
    assert scores(s) == (34, 31) and is_last_turn(s)
    w = LastTurn(10.0).worths(s)
    assert w.action_worth(parse_action("flip green-4b"), 0) == pytest.approx(10.04)
    assert w.action_worth(parse_action("flip green-3b"), 0) == pytest.approx(5.03)
    assert isinstance(SearchPolicy(Params()).model(s), LastTurn)
    assert not isinstance(SearchPolicy(Params()).model(edit(s, final_round=False)), LastTurn)


def test_sdk_bot_falls_back_only_when_the_clock_is_nearly_out() -> None:
    from arena.sdk import Decision

    sb = load_bot_module("search")
    bot = sb.SearchBot()
    state = apply_throw(
        edit(after_setup(2), chips=[4, 0], pool=12), faces("green red yellow blue purple green")
    )
    bot.decision = Decision(1, move_time=0.01, bank=0.0, received=time.monotonic())
    action = bot.choose(state, legal_actions(state))
    assert action in legal_actions(state) and bot.fallbacks == 1
    bot.decision = Decision(2, move_time=0.2, bank=5.0, received=time.monotonic())
    assert bot.choose(state, legal_actions(state)) == SearchPolicy().choose(state)
    assert bot.fallbacks == 1


def test_worst_case_decision_is_small() -> None:
    """A fresh turn with four chips and six dice, the largest tree: well under the 0.2 s move
    time in CPU (about 20 ms on an idle core; a generous bound for a loaded one)."""
    state = apply_throw(
        edit(after_setup(4), chips=[4, 0, 0, 0], pool=12), faces("green red yellow blue purple lifeguard")
    )
    start = time.process_time()
    action = SearchPolicy().choose(state)
    assert time.process_time() - start < 0.15
    assert action in legal_actions(state)


def test_beats_random_in_a_real_match() -> None:
    """A real match through the referee: search vs random, 0.2 s per decision."""
    from arena.matchrunner import play_local_match, resolve_bot
    from arena.referee import TimeControl

    bots = [resolve_bot("search"), resolve_bot("random")]
    result = asyncio.run(play_local_match(bots, 11, TimeControl(0.2, 5.0), match_id="search-vs-random"))
    assert not result.forfeits
    search, rnd = result.seats
    assert search.score > rnd.score and search.decisions > 10
    events = [json.loads(line) for line in result.replay.splitlines()]
    times = [e["ms"] for e in events if e.get("seat") == 0 and "ms" in e]
    assert len(times) == search.decisions


def test_setup_choice_is_a_placement() -> None:
    policy = SearchPolicy()
    s = new_game(4)
    while s.phase == Phase.SETUP:
        a = policy.choose(s)
        assert a.kind == ActionKind.PLACE and a in legal_actions(s)
        s = apply(s, a)
    assert isinstance(a, Action)
