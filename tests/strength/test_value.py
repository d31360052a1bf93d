"""The learned evaluation: features (shape, perspective, determinism), the value function's
contract (per-seat margins that sum to 0, exact at the end), and the weights file (versioned,
a mismatch refused with a clear message, the shipped weights load)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arena.engine import GreedyPolicy, State, play_game, replay, scores
from arena.strength.features import FEATURE_NAMES, LAYOUT_HASH, N_FEATURES, features, features_all, margins
from arena.strength.value import (
    DEFAULT_WEIGHTS,
    FORMAT_VERSION,
    Network,
    ValueFunction,
    WeightsMismatchError,
    WeightsMissingError,
    load,
    load_default,
    save,
)


def _states(seed: int, players: int) -> list[State]:
    rep = replay(play_game(seed, [GreedyPolicy() for _ in range(players)]).record)
    return rep.states


def test_features_have_the_documented_shape_and_are_deterministic() -> None:
    assert len(FEATURE_NAMES) == N_FEATURES == len(set(FEATURE_NAMES))
    for players in (2, 3, 4):
        for s in _states(players, players)[::7]:
            x = features_all(s)
            assert x.shape == (players, N_FEATURES)
            assert np.all(np.isfinite(x))
            assert np.array_equal(x, features_all(s))  # a pure function of the state
            assert np.array_equal(features(s, players - 1), x[players - 1])
            assert x[0, FEATURE_NAMES.index("bias")] == 1.0
            assert x[0, FEATURE_NAMES.index(f"players_{players}")] == 1.0


def test_features_are_seen_from_the_seat() -> None:
    """In two players, seat 0's own block is seat 1's opponent block, and the margins flip sign."""
    s = _states(5, 2)[-1]
    x = features_all(s)
    me0 = slice(FEATURE_NAMES.index("me_score"), FEATURE_NAMES.index("opp_score"))
    opp1 = slice(FEATURE_NAMES.index("opp_score"), FEATURE_NAMES.index("opp_max_score"))
    assert np.array_equal(x[0, me0], x[1, opp1])
    m = FEATURE_NAMES.index("margin_mean")
    pts = scores(s)
    assert x[0, m] == pytest.approx((pts[0] - pts[1]) / 40.0)
    assert x[0, m] == pytest.approx(-x[1, m])


def test_value_is_per_seat_margins_that_sum_to_zero_and_exact_at_the_end() -> None:
    vf = ValueFunction(Network.init(8, seed=3))
    for players in (2, 4):
        states = _states(11, players)
        for s in states[::25]:
            v = vf.evaluate(s)
            assert v.shape == (players,)
            assert abs(float(v.sum())) < 1e-9
            assert np.array_equal(v, vf.evaluate(s))
        final = states[-1]
        assert list(vf.evaluate(final)) == pytest.approx(margins(scores(final)))
        batch = [*states[200:260:6], final]
        for seat in range(players):
            together = vf.values_after(batch, seat)
            assert together == pytest.approx([vf.leaf(s, seat) for s in batch])


def test_weights_round_trip_and_mismatch_is_refused(tmp_path: Path) -> None:
    net = Network.init(6, seed=9)
    path = tmp_path / "w.npz"
    save(net, path)
    back = load(path).network
    for k, a in net.arrays().items():
        assert np.array_equal(a, back.arrays()[k])
    # another feature layout
    with np.load(path) as data:
        stored = {k: data[k] for k in data.files}
    np.savez(tmp_path / "layout.npz", **{**stored, "layout": np.array("0123456789abcdef")})
    with pytest.raises(
        WeightsMismatchError, match=r"feature layout 0123456789abcdef.*retrain with 'arena train'"
    ):
        load(tmp_path / "layout.npz")
    # another file format
    np.savez(tmp_path / "format.npz", **{**stored, "format_version": np.array(FORMAT_VERSION + 1)})
    with pytest.raises(WeightsMismatchError, match=f"format {FORMAT_VERSION + 1}"):
        load(tmp_path / "format.npz")
    with pytest.raises(WeightsMissingError, match="no weights file"):
        load(tmp_path / "absent.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(WeightsMissingError, match="cannot read"):
        load(tmp_path / "junk.npz")


def test_the_shipped_weights_load_and_were_trained() -> None:
    """If this fails after a change to features.py, retrain: 'arena train' (README)."""
    vf = load_default()
    assert Path(vf.source) == DEFAULT_WEIGHTS
    with np.load(DEFAULT_WEIGHTS) as data:
        assert str(data["layout"]) == LAYOUT_HASH
    meta = vf.network.meta
    assert meta["trained_games"] >= 1000
    assert meta["heldout_rmse"] < meta["board_rmse"] < meta["zero_rmse"]
    assert DEFAULT_WEIGHTS.stat().st_size < 200_000


def test_the_value_fits_the_search_leaf_hook() -> None:
    """H18a's search takes a state value (state, seat) -> margin as its leaf evaluation."""
    from arena.engine import Phase, apply, apply_throw, legal_actions, new_game
    from arena.engine.chance import DiceStream
    from arena.strength.search import SearchPolicy, ValueWorths, load_worth_model
    from arena.strength.value import leaf_value

    model = load_worth_model("arena.strength.value:leaf_value")
    assert isinstance(model, ValueWorths)
    policy = SearchPolicy(worth_model=model)
    s = new_game(2)
    dice = DiceStream(4)
    acted = 0
    while not s.is_over and acted < 40:
        if s.is_chance:
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
            continue
        a = policy.choose(s)
        assert a in legal_actions(s)
        acted += s.phase == Phase.ACTION
        s = apply(s, a)
    assert leaf_value(s, 0) == pytest.approx(load_default().leaf(s, 0))
