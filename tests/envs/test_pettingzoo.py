"""The PettingZoo environment: PettingZoo's own checks, reproducibility, records, pictures, bad input."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from arena.engine import GreedyPolicy
from arena.envs.actions import INDEX, N_ACTIONS, IllegalIndexError
from arena.envs.episode import PlayerCountError
from arena.envs.observation import OBS_SIZE, decode
from arena.envs.pettingzoo import CoolAmPoolEnv, env, raw_env
from arena.envs.render import HEIGHT, WIDTH

from .helpers import run_arena

# The two warnings PettingZoo's api_test gives every board-game environment with an action mask
# in a dict observation (its own classic environments get them too); anything else fails.
EXPECTED_WARNINGS = (
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "Observation is not a NumPy array",
)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_api_test_and_seed_test(players: int) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(players), num_cycles=1000)
        seed_test(lambda: env(players), num_cycles=500)
    unexpected = {str(w.message) for w in caught} - set(EXPECTED_WARNINGS)
    assert not unexpected


def play_out(e: CoolAmPoolEnv, choose) -> list[float]:  # type: ignore[no-untyped-def]
    """Play the episode to the end with ``choose(agent, obs) -> index``; the final rewards."""
    final = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        if terminated or truncated:
            final[agent] = float(reward)
            e.step(None)
        else:
            e.step(choose(agent, obs))
    return [final[a] for a in e.possible_agents]


def random_choice(rng: random.Random):  # type: ignore[no-untyped-def]
    return lambda agent, obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_an_episode_is_a_game_record_that_arena_engine_verify_accepts(players: int, tmp_path: Path) -> None:
    e = env(players)
    e.reset(seed=8146625516662860959 - players)
    rewards = play_out(e, random_choice(random.Random(players)))
    text = e.record()
    path = tmp_path / "episode.jsonl"
    path.write_text(text)
    done = run_arena("engine", "verify", str(path), home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replay exactly" in done.stdout
    result = json.loads(text.splitlines()[-1])
    assert json.loads(text.splitlines()[0])["seed"] == 8146625516662860959 - players
    # rewards are the placings of the record's scores
    scores = result["scores"]
    expect = [(sum(q < p for q in scores) - sum(q > p for q in scores)) / (players - 1) for p in scores]
    assert rewards == expect and abs(sum(rewards)) < 1e-9
    # a tampered record is refused: the check can fail
    bad = text.replace('"throw": "throw ', '"throw": "throw green,', 1)
    path.write_text(bad)
    assert run_arena("engine", "verify", str(path), home=tmp_path).returncode != 0


def test_the_same_seed_gives_the_same_episode_as_the_engine(tmp_path: Path) -> None:
    """`arena engine play --policy greedy` and the environment driven by the same greedy choices
    (made on the decoded observation of the agent to act) write the same record, byte for byte."""
    out = tmp_path / "engine.jsonl"
    done = run_arena(
        "engine",
        "play",
        "--players",
        "3",
        "--seed",
        "4242",
        "--policy",
        "greedy",
        "--out",
        str(out),
        home=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    greedy = GreedyPolicy()
    e = env(3)
    e.reset(seed=4242)
    play_out(e, lambda agent, obs: INDEX[greedy.choose(decode(obs["observation"]))])
    assert e.record() == out.read_text()
    e.reset(seed=4243)
    play_out(e, lambda agent, obs: INDEX[greedy.choose(decode(obs["observation"]))])
    assert e.record() != out.read_text()


def test_reset_without_a_seed_follows_the_last_seeded_reset() -> None:
    a, b = env(2), env(2)
    a.reset(seed=5)
    b.reset(seed=5)
    a.reset()
    b.reset()
    assert a.seed_used == b.seed_used != 5
    c = env(2)
    c.reset()
    assert 0 <= c.seed_used < 2**63


def test_rewards_margin_mode_and_the_observation_dict() -> None:
    e = env(4, reward="margin")
    e.reset(seed=3)
    obs, *_ = e.last()
    assert set(obs) == {"observation", "action_mask"}
    assert obs["observation"].shape == (OBS_SIZE,) and obs["action_mask"].shape == (N_ACTIONS,)
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"][:24].all()
    others = e.observe("player_1")["action_mask"]
    assert not others.any()  # only the agent to act has legal actions
    rewards = play_out(e, random_choice(random.Random(0)))
    scores = json.loads(e.record().splitlines()[-1])["scores"]
    assert rewards == [p - (sum(scores) - p) / 3 for p in scores]
    assert not e.agents  # every agent stepped out with None


def test_illegal_actions_raise_naming_the_action_and_the_legal_ones() -> None:
    e = env(2)
    e.reset(seed=1)
    with pytest.raises(IllegalIndexError) as err:
        e.step(24)
    assert "action index 24 ('stop') is not legal for seat 0 in phase setup" in str(err.value)
    assert "the legal ones: 0 'place green-4a'" in str(err.value)
    e.step(0)
    with pytest.raises(IllegalIndexError, match="'place green-4a'"):
        e.step(0)  # taken now: never silently corrected to another lounger
    with pytest.raises(IllegalIndexError, match="outside the action space"):
        e.step(-1)
    with pytest.raises(IllegalIndexError, match="not an integer"):
        e.step(None)  # a live agent must act
    assert e.agent_selection == "player_1"


def test_wrong_player_counts_and_options_are_refused() -> None:
    for bad in (1, 5, 0):
        with pytest.raises(PlayerCountError, match="played by 2, 3 or 4 players"):
            env(bad)
    with pytest.raises(ValueError, match="render_mode must be one of ansi, rgb_array, human"):
        env(2, render_mode="rgb")
    with pytest.raises(ValueError, match="reward mode"):
        raw_env(2, reward="score")
    with pytest.raises(RuntimeError, match="call reset"):
        env(2).step(0)


def test_rendering_as_text_rgb_array_and_svg() -> None:
    e = env(3, render_mode="rgb_array")
    e.reset(seed=11)
    rng = random.Random(2)
    for _ in range(300):
        obs, *_ = e.last()
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    img = e.render()
    assert isinstance(img, np.ndarray) and img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 8  # a picture, not a blank
    svg = e.svg()
    assert svg.startswith("<svg") and svg.count("<rect") > 40 and "green-4a" in svg
    text_env = env(3, render_mode="ansi")
    text_env.reset(seed=11)
    text = text_env.render()
    assert isinstance(text, str) and "lifeguard" in text and "seat 2" in text
    # the picture follows the state: after more moves it changes
    before = img.copy()
    for _ in range(100):
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if not e.agents:
            break
    assert not np.array_equal(before, e.render())


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_render_test(players: int, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: env(players, render_mode=render_mode))
    assert "lifeguard" in capsys.readouterr().out  # human mode prints the board


def test_every_call_before_reset_says_to_call_reset() -> None:
    """``last()`` before ``reset()`` was an AttributeError (no ``agent_selection``) where
    ``step``, ``observe`` and ``record`` already said what to do."""
    from arena.envs.pettingzoo import EnvStateError

    e = raw_env(players=2)
    for call in (
        lambda: e.last(),
        lambda: e.last(observe=False),
        lambda: e.step(0),
        lambda: e.observe("player_0"),
    ):
        with pytest.raises(EnvStateError, match=r"call reset\(\) before using the environment"):
            call()
