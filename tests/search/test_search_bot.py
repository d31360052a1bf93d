"""The search bot (bots/search_bot.py): exact expectimax, legality, time, strength."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import pytest
from search_helpers import after_setup, edit, load_search_bot, secure_all_but

from arena.engine import (
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
    throw_distribution_float,
)
from arena.engine.board import FACES
from arena.engine.chance import DiceStream

sb = load_search_bot()


def faces(text: str) -> tuple[int, ...]:
    return tuple(FACES.index(n) for n in text.split())


def rolled(state: State, *steps: str) -> State:
    """Apply throws (``"throw green red ..."``) and rolling actions (``"keep green=2"``) in turn."""
    for step in steps:
        state = apply_throw(state, faces(step[6:])) if step.startswith("throw ") else apply(state, step)
    return state


def brute_force(state: State, ev: object, total: int) -> float:
    """The value of ``state`` by plain enumeration through the engine: every legal rolling
    choice, every throw outcome with its probability, the best legal lounger action at the end."""
    me = state.seat
    if state.phase == Phase.THROW:
        return sum(
            p * brute_force(apply_throw_counts(state, counts), ev, total)
            for counts, p in throw_distribution_float(state.dice)
        )
    if state.phase == Phase.ACTION:
        chips = state.chips[me]
        best = max(ev.action_value(a, chips, total) for a in legal_actions(state))  # type: ignore[attr-defined]
        return best + ev.chip_value(chips)  # type: ignore[attr-defined]
    assert state.phase == Phase.ROLL
    return max(brute_force(apply(state, a), ev, total) for a in legal_actions(state))


def planner_values(state: State) -> dict[str, float]:
    player = sb.SearchPlayer()
    planner, _, _ = player.planner_for(state)
    return {str(a): v for v, a in planner.decide(state.kept, state.last, state.chips[state.seat])}


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
    """Every rolling choice's expectimax value equals a brute-force enumeration over engine states
    (R10-R18: kept dice, lifeguards set aside, CHIP re-throws, the lifeguard's move, reach)."""
    base = edit(
        after_setup(2),
        {"green-3a": {"figure": 1}, "blue-4b": {"figure": 0}, "red-2": {"side": "guest"}},
        lifeguard=guard,
        chips=[chips, 3],
        pool=16 - chips - 3,
        figures=[4, 4],
    )
    state = rolled(base, *steps)
    assert state.phase == Phase.ROLL
    values = planner_values(state)
    assert set(values) == {str(a) for a in legal_actions(state)}
    player = sb.SearchPlayer()
    _, ev, total = player.planner_for(state)
    for text, value in values.items():
        assert value == pytest.approx(brute_force(apply(state, text), ev, total), abs=1e-9), text


def test_stop_beats_keep_when_a_lifeguard_would_block() -> None:
    """Hand-built: my only useful lounger is purple-3; two purples are kept and the last throw is
    purple, green.  STOP flips purple-3.  KEEP purple re-throws the green die, whose lifeguard face
    (1/6) steps the lifeguard from yellow onto purple and blocks it: 5/6 of STOP.  KEEP green
    re-throws the purple die, purple again with 1/6 (and no lifeguard): 1/6 of STOP."""
    state = secure_all_but(after_setup(2), {"purple-3"})
    state = edit(state, lifeguard="yellow", chips=[0, 0])
    state = rolled(
        state, "throw purple purple red blue green yellow", "keep purple=2,red=1,blue=1", "throw purple green"
    )
    values = planner_values(state)
    assert set(values) == {"stop", "keep purple=1", "keep green=1"}
    player = sb.SearchPlayer()
    _, ev, total = player.planner_for(state)
    flip = ev.action_value(parse_action("flip purple-3"), 0, total)
    assert flip > 0
    assert values["stop"] == pytest.approx(flip)
    assert values["keep purple=1"] == pytest.approx(5 / 6 * flip)
    assert values["keep green=1"] == pytest.approx(1 / 6 * flip)
    assert sb.SearchPlayer().choose(state, 0.1) == parse_action("stop")


def test_keep_beats_stop_when_one_more_die_is_needed() -> None:
    """Hand-built: only purple-4 is worth anything and three purples are kept; the last throw is
    green, red, blue.  STOP reaches nothing.  KEEP one die and throw two: a purple comes with
    11/36; two other colours allow one more single-die try (16/36 * 1/6); a lifeguard can only
    step the lifeguard from green to row2-left or row3-left, which never block purple-4.
    KEEP two dice and throw one: 1/6."""
    state = secure_all_but(after_setup(2), {"purple-4"})
    state = edit(state, lifeguard="green", chips=[0, 0])
    state = rolled(
        state, "throw purple purple purple green red blue", "keep purple=3", "throw green red blue"
    )
    values = planner_values(state)
    player = sb.SearchPlayer()
    _, ev, total = player.planner_for(state)
    flip4 = ev.action_value(parse_action("flip purple-4"), 0, total)
    assert flip4 > 0
    assert values["stop"] == pytest.approx(0.0)
    for keep in ("keep green=1", "keep red=1", "keep blue=1"):
        assert values[keep] == pytest.approx((11 / 36 + 16 / 36 / 6) * flip4)
    for keep in ("keep green=1,red=1", "keep green=1,blue=1", "keep red=1,blue=1"):
        assert values[keep] == pytest.approx(flip4 / 6)
    assert str(sb.SearchPlayer().choose(state, 0.1)) in ("keep green=1", "keep red=1", "keep blue=1")


def test_always_legal_in_random_positions() -> None:
    """From positions of random games (2-4 players, odd material), every choice is legal."""
    player = sb.SearchPlayer()
    checked = 0
    for players in (2, 3, 4):
        for seed in range(2):
            dice = DiceStream(seed)
            policy = RandomPolicy(seed)
            state = after_setup(players) if seed else new_game(players)
            steps = 0
            while not state.is_over and steps < 600:
                steps += 1
                if state.is_chance:
                    state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
                    continue
                if steps % 5 == 0:
                    action = player.choose(state, 0.05)
                    assert action in legal_actions(state)
                    checked += 1
                state = apply(state, policy.choose(state))
    assert checked > 100


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_respects_a_tiny_time_budget() -> None:
    """With 2 ms the bot still answers legally, well within a few ms (it falls back to a cheap
    rule when the expectimax cannot finish in time); with a normal budget it stays under it."""
    state = edit(after_setup(4), chips=[4, 0, 0, 0], pool=12)
    state = apply_throw(state, faces("green red yellow blue purple lifeguard"))
    player = sb.SearchPlayer()
    action = None

    def go() -> None:
        nonlocal action
        action = player.choose(state, 0.002)

    assert timed(go) < 0.05  # the full search of this turn takes about 40 ms on an idle core
    assert action in legal_actions(state)
    assert player.timeouts == 1  # answered by the fallback rule
    fresh = sb.SearchPlayer()
    assert timed(lambda: fresh.choose(state, 0.15)) < 0.2


def test_sdk_bot_uses_the_decision_clock() -> None:
    from arena.sdk import Decision

    bot = sb.SearchBot()
    state = apply_throw(
        edit(after_setup(2), chips=[4, 0], pool=12), faces("green red yellow blue purple green")
    )
    bot.decision = Decision(1, move_time=0.01, bank=0.0, received=time.monotonic())
    start = time.perf_counter()
    action = bot.choose(state, legal_actions(state))
    assert time.perf_counter() - start < 0.05
    assert parse_action(str(action)) in legal_actions(state)
    assert bot.player.timeouts == 1  # no time left after the margin: the fallback answered


def test_beats_random_in_a_real_match() -> None:
    """A real match through the referee: search vs random, 0.2 s per decision."""
    from arena.matchrunner import play_local_match, resolve_bot
    from arena.referee import TimeControl

    bots = [resolve_bot("search"), resolve_bot("random")]
    result = asyncio.run(play_local_match(bots, 11, TimeControl(0.2, 5.0), match_id="search-vs-random"))
    assert not result.forfeits
    search, rnd = result.seats
    assert search.score > rnd.score
    assert search.decisions > 10
    assert search.think_total / search.decisions < 0.05  # a few ms on average
    events = [json.loads(line) for line in result.replay.splitlines()]
    times = [e["ms"] for e in events if e.get("seat") == 0 and "ms" in e]
    assert len(times) == search.decisions
    over = [t for t in times if t > 200]
    assert len(over) <= max(1, len(times) // 100), over  # only a loaded machine's hiccup may pass 0.2 s


def test_setup_choice_is_a_placement() -> None:
    player = sb.SearchPlayer()
    s = new_game(4)
    while s.phase == Phase.SETUP:
        a = player.choose(s, 0.05)
        assert a.kind == ActionKind.PLACE and a in legal_actions(s)
        s = apply(s, a)
