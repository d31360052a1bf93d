"""From training to the arena: policies and OpenSpiel bots as arena bots, over real gRPC, in real
processes started by the arena's own commands."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.engine import DiceStream, apply, apply_throw, legal_actions, new_game, replay
from arena.envs.actions import INDEX, IllegalIndexError
from arena.envs.adapter import OpenSpielBot, PolicyBot
from arena.envs.observation import encode, mask

from .helpers import ROOT, run_arena

EXAMPLES = ROOT / "examples"


def _a_roll_state():  # type: ignore[no-untyped-def]
    s = new_game(3)
    for _ in range(24):
        s = apply(s, legal_actions(s)[-1])
    return apply_throw(s, DiceStream(2).throw(1, 1, 6))


def test_policy_bot_gives_the_policy_what_the_environment_gives() -> None:
    seen = []

    def policy(obs: np.ndarray, m: np.ndarray) -> np.int64:
        seen.append((obs, m))
        return np.int64(np.flatnonzero(m)[-1])

    bot = PolicyBot(policy, name="last")
    s = _a_roll_state()
    action = bot.choose(s, legal_actions(s))
    assert action == legal_actions(s)[-1]
    assert np.array_equal(seen[0][0], encode(s, s.seat)) and np.array_equal(seen[0][1], mask(s))
    with pytest.raises(IllegalIndexError, match=r"action index 0 \('place green-4a'\) is not legal"):
        PolicyBot(lambda obs, m: 0).choose(s, legal_actions(s))


def test_openspiel_bot_steps_the_bot_on_the_referees_state() -> None:
    asked = []

    class First:
        def step(self, state):  # type: ignore[no-untyped-def]
            asked.append(state.engine)
            return state.legal_actions()[0]

    bot = OpenSpielBot(lambda game, seat, seed: First())
    bot.players, bot.seat = 3, 1
    s = _a_roll_state()
    assert bot.choose(s, legal_actions(s)) == legal_actions(s)[0]
    assert asked == [s]


def _match(tmp_path: Path, *bots: str, seed: int = 3, extra: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    out = tmp_path / "match.jsonl"
    logs = tmp_path / "logs"
    done = run_arena(
        "match",
        *bots,
        "--seed",
        str(seed),
        "--quiet",
        "--out",
        str(out),
        "--logs",
        str(logs),
        *extra,
        home=tmp_path / "home",
    )
    return done, out, logs


def test_openspiels_mcts_bot_plays_an_arena_match_over_grpc(tmp_path: Path) -> None:
    generous = ("--move-time", "5", "--bank", "60")  # a loaded machine must not forfeit the search
    done, out, _ = _match(tmp_path, str(EXAMPLES / "mcts_bot.py"), "random", "random", extra=generous)
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text()
    header = json.loads(text.splitlines()[0])
    assert header["seating"][0] == "mcts_bot" and header["players"] == 3
    rep = replay(text)  # the referee's record of the match replays exactly
    assert rep.final.is_over and "forfeits" not in rep.result
    mcts_moves = [e for e in rep.events if e.get("seat") == 0 and not e.get("forced")]
    assert len(mcts_moves) > 50


def test_an_illegal_index_forfeits_the_bot_with_the_reason_in_its_log(tmp_path: Path) -> None:
    bot = tmp_path / "bad_bot.py"
    bot.write_text(
        "from arena.envs.adapter import PolicyBot\nfrom arena.sdk import run\n"
        "run(PolicyBot(lambda obs, mask: 24, name='bad'))\n"
    )
    done, _, logs = _match(tmp_path, str(bot), "random")
    assert done.returncode == 3, done.stdout + done.stderr
    log = (logs / "m1-seat0-bad_bot.stderr.log").read_text()
    assert "IllegalIndexError: action index 24 ('stop') is not legal for seat 0 in phase setup" in log
    assert "0 'place green-4a'" in log


def test_a_trained_agent_enters_arena_evaluate_unchanged_and_beats_random(tmp_path: Path) -> None:
    """Train the example agent briefly, then measure it with `arena evaluate` against random."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import train_rolling
    finally:
        sys.path.remove(str(EXAMPLES))
    agent, games = train_rolling.train(8.0, seed=1)
    assert games >= 5 and agent.table
    for name in ("rolling_agent.py", "rolling_bot.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    agent.save(tmp_path / "rolling_agent.json")
    done = run_arena(
        "evaluate",
        str(tmp_path / "rolling_bot.py"),
        "--vs",
        "random",
        "--games",
        "4",
        "--no-sequential",
        "--jobs",
        "1",
        "--seed",
        "11",
        "--move-time",
        "2",
        "--bank",
        "30",
        "--json",
        "--quiet",
        home=tmp_path / "home",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["games"] == 4 and summary["forfeits"] == {"candidate": 0, "baseline": 0}
    assert summary["share"]["estimate"] > 0.5, summary
    assert summary["think_time"]["candidate"]["decisions"] > 100


def test_the_trained_policy_is_index_based_like_the_environment() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from rolling_agent import RollingAgent
    finally:
        sys.path.remove(str(EXAMPLES))
    s = _a_roll_state()
    index = RollingAgent()(encode(s, s.seat), mask(s))
    assert index == INDEX[legal_actions(s)[0]]  # untrained: it stops


def test_openspiel_bot_takes_a_ready_bot_too() -> None:
    from open_spiel.python.algorithms import mcts

    from arena.envs.openspiel import ScoreEvaluator, load

    ready = mcts.MCTSBot(load(3), 2.0, 10, ScoreEvaluator(), random_state=np.random.RandomState(1))
    bot = OpenSpielBot(ready)
    bot.players, bot.seat = 3, 0
    s = _a_roll_state()
    assert bot.choose(s, legal_actions(s)) in legal_actions(s)
    assert bot.bot is ready
