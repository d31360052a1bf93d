"""The action indices, the observation and the episode runner (numpy only, no rl extra needed)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from arena.engine import DiceStream, Phase, RandomPolicy, apply_throw, legal_actions, new_game, play_game
from arena.engine.actions import ACTIONS_BY_TEXT
from arena.envs import actions as A
from arena.envs import doc
from arena.envs.episode import Episode, PlayerCountError, final_rewards
from arena.envs.observation import LAYOUT, OBS_SIZE, decode, encode, mask, views

from .helpers import random_states


def test_every_action_of_the_notation_has_one_stable_index() -> None:
    assert A.N_ACTIONS == 376 == len(set(A.TEXTS))
    assert set(A.TEXTS) == set(ACTIONS_BY_TEXT)
    # pinned: these indices are a public contract (trained agents depend on them)
    assert A.TEXTS[0] == "place green-4a" and A.TEXTS[23] == "place blue-2b"
    assert (A.TEXTS[24], A.TEXTS[25], A.TEXTS[26], A.TEXTS[276]) == (
        "stop",
        "chip",
        "keep blue=1",
        "keep green=5",
    )
    assert A.TEXTS[277] == "pass"
    assert A.TEXTS[278:282] == ("flip green-4a", "reclaim green-4a", "invade green-4a", "conquer green-4a")
    assert A.TEXTS[374:] == ("take-five five-1", "take-five five-2")
    for i, text in enumerate(A.TEXTS):
        assert A.index_of(text) == i and str(A.action_of(i)) == text


@pytest.mark.parametrize("players", [2, 3, 4])
def test_increasing_indices_are_the_engines_order_of_legal_actions(players: int) -> None:
    for s in random_states(players, seed=players):
        legal = legal_actions(s)
        assert [A.TEXTS[i] for i in A.legal_indices(s)] == [str(a) for a in legal]
        assert A.legal_indices(s) == sorted(A.legal_indices(s))
        assert np.flatnonzero(mask(s)).tolist() == A.legal_indices(s)


def test_the_docs_tables_are_generated_from_the_code() -> None:
    text = doc.DOC.read_text()
    assert doc.render(text) == text, "docs/envs.md is out of date: run python -m arena.envs.doc"
    assert "| 277 | `pass` |" in text and "| 0 | `towel` | 26 × 4 |" in text
    done = subprocess.run(
        [sys.executable, "-m", "arena.envs.doc", "--check"], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_a_changed_table_is_noticed() -> None:
    stale = doc.DOC.read_text().replace("| 277 | `pass` |", "| 277 | `stop` |")
    assert doc.render(stale) != stale


def test_throw_outcomes_carry_the_exact_multinomial_distribution() -> None:
    for k in range(7):
        outcomes, probs = A.throw_outcomes(k), A.throw_probabilities(k)
        assert len(outcomes) == len(set(outcomes)) and sum(probs) == 1
        assert all(sum(c) == k for c in outcomes)
    assert A.MAX_THROW_OUTCOMES == 462
    six_lifeguards = A.outcome_number([5] * 6)
    assert A.throw_probabilities(6)[six_lifeguards] == Fraction(1, 6**6)
    one_each = A.outcome_number(range(6))
    assert A.throw_probabilities(6)[one_each] == Fraction(720, 6**6)


def test_observation_layout_and_bounds() -> None:
    assert OBS_SIZE == sum(p.size for p in LAYOUT) == 325
    for players in (2, 3, 4):
        for s in random_states(players, seed=10 + players)[::7]:
            for seat in range(players):
                obs = encode(s, seat)
                assert obs.dtype == np.float32 and obs.shape == (OBS_SIZE,)
                assert obs.min() >= 0.0 and obs.max() <= 1.0
                v = views(obs)
                assert v["seats"].sum() == players
                assert v["phase"].sum() == 1 and v["phase"].argmax() == int(s.phase)


def _rotated(s, seat):  # type: ignore[no-untyped-def]
    n = s.players

    def rel(a: int) -> int:
        return -1 if a < 0 else (a - seat) % n

    def rot(t):  # type: ignore[no-untyped-def]
        return t[seat:] + t[:seat]

    return (
        tuple(map(rel, s.towel)),
        s.secured,
        tuple(map(rel, s.figure)),
        s.guard,
        rot(s.towels),
        rot(s.figures),
        rot(s.chips),
        s.phase,
        0 if s.is_over else rel(s.seat),
        s.kept,
        s.last,
        s.result,
        s.dice,
        s.throw_no,
        s.pool,
        s.round,
        s.final_round,
        s.occupied,
        s.termination,
    )


@pytest.mark.parametrize("players", [2, 3, 4])
def test_decode_gives_back_the_state_seen_from_the_observer(players: int) -> None:
    states = random_states(players, seed=20 + players)
    for s in [*states[::3], states[-1]]:
        for seat in range(players):
            d = decode(encode(s, seat))
            assert _rotated(d, 0) == _rotated(s, seat)
            assert [str(a) for a in legal_actions(d)] == [str(a) for a in legal_actions(s)]


def test_the_observation_is_egocentric() -> None:
    s = random_states(3, seed=3)[200]
    mine = [views(encode(s, seat))["towel"][:, 0].sum() for seat in range(3)]
    assert mine == [sum(1 for t in s.towel if t == seat) for seat in range(3)]


def test_the_episode_plays_the_engines_game_on_the_dice_stream() -> None:
    """Driven by the engine's random policy's choices, the episode's record is the engine's."""
    for players in (2, 3, 4):
        game = play_game(77, [RandomPolicy(f"77:{k}") for k in range(players)])
        episode = Episode(players, 77)
        for line in game.record.splitlines():
            if '"action"' in line:
                text = line.split('"action": "')[1].split('"')[0]
                episode.step(A.index_of(text))
        assert episode.over and episode.state == game.final
        assert episode.record() == game.record


def test_rewards_at_the_end_sum_to_zero() -> None:
    assert final_rewards((30, 20, 20), "placing") == (1.0, -0.5, -0.5)
    assert final_rewards((30, 20, 10), "margin") == (15.0, 0.0, -15.0)
    assert final_rewards((9, 9), "placing") == (0.0, 0.0)
    for pts in ((3, 9, 1, 9), (0, 0, 0), (41, 12)):
        for mode in ("placing", "margin"):
            assert abs(sum(final_rewards(pts, mode))) < 1e-9


def test_bad_input_is_refused_with_a_clear_message() -> None:
    episode = Episode(2, 1)
    with pytest.raises(A.IllegalIndexError) as err:
        episode.step(A.STOP_INDEX)
    text = str(err.value)
    assert "'stop'" in text and "phase setup" in text and "0 'place green-4a'" in text
    assert err.value.action == "stop" and (0, "place green-4a") in err.value.legal
    with pytest.raises(A.IllegalIndexError, match=r"outside the action space 0\.\.375"):
        episode.step(376)
    with pytest.raises(A.IllegalIndexError, match="not an integer"):
        episode.step("stop")
    with pytest.raises(A.IllegalIndexError, match="not an integer"):
        episode.step(1.0)
    assert episode.state == new_game(2) and not episode.events  # nothing was corrected or applied
    episode.step(np.int64(5))
    assert episode.state.towel[5] == 0
    for bad in (1, 5, 0, "3", True):
        with pytest.raises(PlayerCountError, match="2, 3 or 4 players"):
            Episode(bad, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reward mode"):
        Episode(2, 1, reward="win")
    with pytest.raises(ValueError, match="0 <= seed < 2\\*\\*63"):
        Episode(2, -1)


def test_chance_is_never_left_to_the_caller() -> None:
    episode = Episode(2, 9)
    while not episode.over:
        assert episode.state.phase != Phase.THROW
        episode.step(A.legal_indices(episode.state)[-1])
    dice = DiceStream(9)
    s = new_game(2)
    for event in episode.events:
        if isinstance(event, tuple) and not hasattr(event, "kind"):
            assert tuple(event) == dice.throw(s.turn, s.throw_no + 1, s.dice)
            s = apply_throw(s, event)
        else:
            from arena.engine import apply

            s = apply(s, event)
    assert s == episode.state


def test_the_core_does_not_need_the_rl_extra() -> None:
    code = (
        "import sys; sys.modules['pyspiel'] = None; sys.modules['pettingzoo'] = None; "
        "import arena.envs.actions, arena.envs.observation, arena.envs.episode, arena.envs.render, "
        "arena.envs.adapter, arena.cli.main, arena.sdk\n"
        "for name, tag in (('arena.envs.openspiel', 'OS'), ('arena.envs.pettingzoo', 'PZ')):\n"
        "    try:\n        __import__(name)\n"
        "    except ImportError as e:\n        print(tag, type(e).__name__, e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "OS MissingExtraError OpenSpiel (the open_spiel package) is not installed" in done.stdout
    assert "PZ MissingExtraError PettingZoo is not installed" in done.stdout
    assert "pip install 'pool-arena[rl]'" in done.stdout
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import arena.cli.main, arena.envs.adapter, sys; "
            "extra = ('pyspiel', 'pettingzoo', 'open_spiel', 'gymnasium'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in extra))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr
