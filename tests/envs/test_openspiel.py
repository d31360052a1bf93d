"""The OpenSpiel game: OpenSpiel's random simulation tests, chance, tensors, serialisation, MCTS,
and the same game as the engine and the environment for the same seed."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import mcts

from arena.engine import GreedyPolicy, play_game
from arena.envs import openspiel as osp
from arena.envs.actions import N_ACTIONS, index_of, outcome_counts
from arena.envs.episode import PlayerCountError
from arena.envs.observation import OBS_SIZE, encode

from .helpers import ROOT, record_actions


@pytest.mark.parametrize("players", [2, 3, 4])
def test_openspiel_random_simulation_tests(players: int) -> None:
    game = pyspiel.load_game("python_cool_am_pool", {"players": players})
    assert game.num_players() == players
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_random_simulation_tests_with_the_other_parameters() -> None:
    game = pyspiel.load_game("python_cool_am_pool", {"players": 2, "reward": "margin", "rules": "sprint"})
    assert game.max_utility() == 70.0 and game.min_utility() == -70.0
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_game_parameters_and_bad_ones() -> None:
    game = osp.load(3)
    assert game.num_distinct_actions() == N_ACTIONS == 376
    assert game.max_chance_outcomes() == 462
    assert game.observation_tensor_size() == game.information_state_tensor_size() == OBS_SIZE
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    for bad in (1, 5):
        with pytest.raises(PlayerCountError, match="2, 3 or 4 players, got players="):
            pyspiel.load_game("python_cool_am_pool", {"players": bad})
        with pytest.raises(PlayerCountError):
            osp.load(bad)
    with pytest.raises(ValueError, match="reward mode"):
        pyspiel.load_game("python_cool_am_pool", {"reward": "win"})
    with pytest.raises(Exception, match="unknown rules"):
        pyspiel.load_game("python_cool_am_pool", {"rules": "blitz"})


def _to_chance(seed: int = 0):  # type: ignore[no-untyped-def]
    state = osp.load(2).new_initial_state()
    rng = random.Random(seed)
    while not state.is_chance_node():
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def test_chance_nodes_carry_the_exact_throw_distribution() -> None:
    state = _to_chance()
    exact = state.exact_chance_outcomes()
    assert len(exact) == 462 and sum(p for _, p in exact) == 1
    assert [a for a, _ in state.chance_outcomes()] == list(range(462))
    assert all(
        abs(p - float(q)) < 1e-15 for (_, p), (_, q) in zip(state.chance_outcomes(), exact, strict=True)
    )
    text = {state.action_to_string(pyspiel.PlayerId.CHANCE, a): p for a, p in exact}
    assert text["throw lifeguard,lifeguard,lifeguard,lifeguard,lifeguard,lifeguard"] == Fraction(1, 46656)
    assert text["throw green,purple,yellow,red,blue,lifeguard"] == Fraction(720, 46656)
    # after a keep fewer dice are thrown, with their own outcomes
    state.apply_action(state.stream_outcome(3))
    keeps = [
        a
        for a in state.legal_actions()
        if state.action_to_string(state.current_player(), a).startswith("keep")
    ]
    if keeps:
        state.apply_action(keeps[0])
        k = state.engine.dice
        assert len(state.chance_outcomes()) == len(
            {outcome_counts(k, n) for n in range(len(state.chance_outcomes()))}
        )
        assert sum(p for _, p in state.exact_chance_outcomes()) == 1
    with pytest.raises(ValueError, match="chance outcome 500 does not exist"):
        _to_chance().apply_action(500)


def test_tensors_and_strings_from_every_seat() -> None:
    state = _to_chance(1)
    state.apply_action(state.stream_outcome(1))
    for player in range(2):
        obs = np.array(state.observation_tensor(player), np.float32)
        assert np.array_equal(obs, encode(state.engine, player))
        assert np.array_equal(np.array(state.information_state_tensor(player), np.float32), obs)
        assert state.information_state_string(player).endswith(state.history_str())
        assert state.observation_string(player).startswith(f"seat {player} roll")


@pytest.mark.parametrize("players", [2, 4])
def test_the_observation_string_tells_every_observation_apart(players: int) -> None:
    """Two states with the same observation string have the same observation tensor, the same
    player to act and the same legal actions; the string names the turn, the throw, the dice
    left to throw and the final round (it left them out: states differing there read alike)."""
    game = osp.load(players)
    seen: dict[str, tuple[bytes, int, tuple[int, ...]]] = {}
    for seed in range(6):
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            player = state.current_player()
            seat = max(player, 0)
            text = state.observation_string(seat)
            what = (
                np.array(state.observation_tensor(seat), np.float32).tobytes(),
                player,
                tuple(state.legal_actions()),
            )
            assert seen.setdefault(text, what) == what, text
            if state.is_chance_node():
                outcomes, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, weights)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        s = state.engine
        text = state.observation_string(0)
        for part in (f"turn={s.turn}", f"throw={s.throw_no}", f"to_throw={s.dice}", f"end={s.termination}"):
            assert part in text, (part, text)
    assert len(seen) > 1000


def test_serialisation_round_trip_mid_game() -> None:
    game = osp.load(4)
    state = game.new_initial_state()
    rng = random.Random(4)
    for _ in range(400):
        if state.is_chance_node():
            state.apply_action(state.stream_outcome(99))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    text = state.serialize()
    back = game.deserialize_state(text)
    assert back.engine == state.engine and back.history() == state.history()
    assert str(back) == str(state)


def test_illegal_decisions_are_refused() -> None:
    state = osp.load(2).new_initial_state()
    with pytest.raises(Exception, match=r"action index 24 \('stop'\) is not legal for seat 0 in phase setup"):
        state.apply_action(24)


def test_the_same_seed_gives_the_same_game_as_the_engine() -> None:
    """OpenSpiel with the stream's chance outcomes and the engine's greedy choices reaches the
    engine's final state, with the same throws in its history."""
    for players in (2, 3, 4):
        played = play_game(31337, [GreedyPolicy()] * players)
        actions = iter(record_actions(played.record))
        state = osp.load(players).new_initial_state()
        throws = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcome = state.stream_outcome(31337)
                throws.append(state.action_to_string(pyspiel.PlayerId.CHANCE, outcome))
                state.apply_action(outcome)
            else:
                state.apply_action(index_of(next(actions)))
        assert state.engine == played.final
        assert throws == [line.split('"')[3] for line in played.record.splitlines() if '"throw"' in line]
        pts = played.outcome.scores
        assert state.returns() == [
            (sum(q < p for q in pts) - sum(q > p for q in pts)) / (players - 1) for p in pts
        ]


def test_openspiels_mcts_bot_plays_a_whole_game() -> None:
    game = osp.load(2, rules="sprint")
    bot = mcts.MCTSBot(
        game, 2.0, 20, osp.ScoreEvaluator(), random_state=np.random.RandomState(0), solve=False
    )
    state = game.new_initial_state()
    rng = random.Random(0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.stream_outcome(5))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert len(state.returns()) == 2 and sum(state.returns()) == 0


def test_one_seed_one_game_in_the_environment_openspiel_and_the_engine() -> None:
    """A PettingZoo episode (random agents, seed S), replayed in OpenSpiel with the stream's
    chance outcomes for seed S, and replayed by the engine from the episode's record: the same
    throws, the same final state, the same returns."""
    from arena.engine import replay
    from arena.envs.pettingzoo import env

    seed = 2**62 + 12345
    e = env(3)
    e.reset(seed=seed)
    rng = random.Random(7)
    chosen: list[int] = []
    final = {}
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        if terminated or truncated:
            final[agent] = reward
            e.step(None)
            continue
        index = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        chosen.append(index)
        e.step(index)
    record = e.record()
    engine_final = replay(record).final  # checks every throw against the dice stream of the seed
    state = osp.load(3).new_initial_state()
    actions = iter(chosen)
    throws = []
    while not state.is_terminal():
        if state.is_chance_node():
            outcome = state.stream_outcome(seed)
            throws.append(state.action_to_string(pyspiel.PlayerId.CHANCE, outcome))
            state.apply_action(outcome)
        else:
            state.apply_action(next(actions))
    assert next(actions, None) is None
    assert state.engine == engine_final
    assert throws == [line.split('"')[3] for line in record.splitlines() if '"throw"' in line]
    assert state.returns() == [final[f"player_{k}"] for k in range(3)]


# Run in a child process: without the guard, pyspiel writes a throw's 462 outcomes into a mask of
# 376 actions, which corrupts the heap and aborts the interpreter.
_SEAT_AT_CHANCE = """
import pyspiel
from arena.envs import openspiel as osp

state = osp.load(3).new_initial_state()
while not state.is_chance_node():
    state.apply_action(state.legal_actions()[0])
assert len(state.chance_outcomes()) == 462  # the first throw: six dice
for player in range(3):
    assert state.legal_actions(player) == [], state.legal_actions(player)[:5]
    assert state.legal_actions_mask(player) == [0] * 376
chance = int(pyspiel.PlayerId.CHANCE)
assert state.legal_actions(chance) == state.legal_actions() == list(range(462))
assert state.legal_actions_mask(chance) == state.legal_actions_mask() == [1] * 462
state.apply_action(0)
seat = state.current_player()
assert seat >= 0 and state.legal_actions(seat) == state.legal_actions() != []
assert state.legal_actions_mask(seat) == state.legal_actions_mask()
assert state.legal_actions((seat + 1) % 3) == [] and state.legal_actions(chance) == []
assert state.legal_actions_mask(chance) == [0] * 462
print("ok")
"""


def test_a_seat_has_no_legal_actions_at_a_chance_node() -> None:
    """OpenSpiel's contract: a player who is not to act has no legal actions and an all-0 mask
    (the C++ games do so; pyspiel's Python states answered a throw's outcomes for every seat, and
    the seat's mask overflowed: 462 outcomes, 376 actions)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", _SEAT_AT_CHANCE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]
