"""The statistics of ``arena evaluate`` (arena/evaluation.py) on inputs with known answers."""

from __future__ import annotations

import math

import pytest

from arena.evaluation import (
    MIN_BOOTSTRAP_GROUPS,
    MIN_SEQUENTIAL_GROUPS,
    GameOutcome,
    GroupOutcome,
    Interval,
    SequentialTest,
    SprtConfig,
    bootstrap_ratio_interval,
    elo_from_share,
    mean_interval,
    normal_quantile,
    seatings,
    share_from_elo,
    share_interval,
    sprt,
    sprt_llr,
    summarize,
    t_quantile,
    wilson_interval,
)


def test_elo_from_share_known_values() -> None:
    assert elo_from_share(0.5) == 0.0
    assert elo_from_share(0.75) == pytest.approx(190.849, abs=1e-3)
    assert elo_from_share(0.25) == pytest.approx(-190.849, abs=1e-3)
    assert elo_from_share(10 / 11) == pytest.approx(400.0)  # odds 10:1 are 400 Elo
    assert elo_from_share(1.0) == math.inf
    assert elo_from_share(0.0) == -math.inf
    with pytest.raises(ValueError):
        elo_from_share(1.5)


@pytest.mark.parametrize("elo", [-400.0, -150.0, 0.0, 35.0, 150.0, 700.0])
def test_share_from_elo_inverts_elo_from_share(elo: float) -> None:
    assert elo_from_share(share_from_elo(elo)) == pytest.approx(elo)
    assert share_from_elo(150.0) == pytest.approx(0.703385, abs=1e-6)


def test_quantiles() -> None:
    assert normal_quantile(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert normal_quantile(0.5) == pytest.approx(0.0, abs=1e-12)
    assert normal_quantile(0.001) == pytest.approx(-3.090232, abs=1e-5)
    # Student t (tables): df 1, 2 exact; the expansion is good to about 1e-3 from df 3 on
    for df, value in [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (10, 2.2281), (30, 2.0423)]:
        assert t_quantile(0.975, df) == pytest.approx(value, abs=5e-3 if df == 3 else 1e-3)


def test_mean_interval_known_values() -> None:
    iv = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    # mean 3, s = 1.5811, se = 0.7071, t(0.975, 4) = 2.7764
    assert iv.estimate == 3.0
    assert iv.high - iv.estimate == pytest.approx(2.7764 * math.sqrt(0.5), abs=2e-3)
    assert iv.estimate - iv.low == pytest.approx(iv.high - iv.estimate)
    one = mean_interval([2.0])
    assert one.estimate == 2.0 and one.low == -math.inf and one.high == math.inf
    with pytest.raises(ValueError):
        mean_interval([])


def test_wilson_interval_known_values() -> None:
    iv = wilson_interval(0.5, 100)
    assert (iv.low, iv.high) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    top = wilson_interval(1.0, 10)
    assert top.high == 1.0 and top.low == pytest.approx(0.7225, abs=1e-4)


def test_bootstrap_is_reproducible_and_degenerate_when_all_groups_agree() -> None:
    same = bootstrap_ratio_interval([1.5] * 20, [2.0] * 20)
    assert (same.estimate, same.low, same.high) == (0.75, 0.75, 0.75)
    nums = [2.0, 1.0, 0.0, 2.0, 1.5, 1.0, 2.0, 0.5, 1.0, 2.0, 1.0, 1.5]
    dens = [2.0] * len(nums)
    a = bootstrap_ratio_interval(nums, dens)
    b = bootstrap_ratio_interval(nums, dens)
    assert a == b
    assert a.low < a.estimate < a.high
    assert a.estimate == pytest.approx(sum(nums) / sum(dens))
    # close to the normal interval of the group means for a sample this size
    normal = mean_interval([n / d for n, d in zip(nums, dens, strict=True)])
    assert a.low == pytest.approx(normal.low, abs=0.06)
    assert a.high == pytest.approx(normal.high, abs=0.06)


def test_interval_map_and_excludes() -> None:
    iv = Interval(0.6, 0.55, 0.65).map(elo_from_share)
    assert iv.low < iv.estimate < iv.high
    assert iv.excludes(0.0)
    assert not Interval(0.1, -1.0, 1.0).excludes(0.0)


def test_pairwise_points_and_score_difference_four_players() -> None:
    # candidate in seat 1, placed 2nd: below seat 0, level with seat 2, above seat 3
    game = GameOutcome(seed=7, candidate_seat=1, scores=(20, 15, 15, 4), placings=(1, 2, 2, 4))
    assert game.pairwise_points == 1.5
    assert game.pairings == 3
    assert game.score_difference == pytest.approx(15 - (20 + 15 + 4) / 3)


def test_two_player_group() -> None:
    win = GameOutcome(1, 0, (30, 20), (1, 2))
    draw = GameOutcome(1, 1, (25, 25), (1, 1))
    group = GroupOutcome(1, (win, draw))
    assert group.points == 1.5 and group.pairings == 2 and group.share == 0.75
    assert group.score_difference == 5.0
    assert seatings(2) == (0, 1) and seatings(4) == (0, 1, 2, 3)
    with pytest.raises(ValueError):
        GameOutcome(1, 2, (1, 2), (2, 1))


def test_share_interval_method_depends_on_group_count() -> None:
    few = [
        GroupOutcome(s, (GameOutcome(s, 0, (3, 1), (1, 2)), GameOutcome(s, 1, (3, 1), (1, 2))))
        for s in range(4)
    ]
    iv, method = share_interval(few)
    assert method.startswith("Wilson") and iv.estimate == 0.5
    assert iv.low == pytest.approx(wilson_interval(0.5, 4).low)
    many = few * (MIN_BOOTSTRAP_GROUPS // len(few) + 1)
    _, method = share_interval(many)
    assert method.startswith("bootstrap")


def test_sprt_llr_known_value() -> None:
    cfg = SprtConfig(0.0, 150.0, 0.05, 0.05)
    scores = [1.0, 0.5, 1.0, 0.5]  # mean 0.75, population variance 0.0625
    s0, s1 = 0.5, share_from_elo(150.0)
    expected = 4 * (s1 - s0) * (2 * 0.75 - s0 - s1) / (2 * 0.0625)
    assert sprt_llr(scores, cfg) == pytest.approx(expected)
    assert cfg.upper == pytest.approx(math.log(19)) and cfg.lower == pytest.approx(-math.log(19))


def test_sprt_decisions() -> None:
    strong = [1.0, 0.75, 1.0, 0.5, 1.0, 0.75, 1.0, 1.0, 0.75, 1.0, 1.0, 0.5] * 3
    state = sprt(strong)
    assert state.decision == "H1" and state.groups == MIN_SEQUENTIAL_GROUPS  # never before the minimum
    weak = [0.5, 0.25, 0.5, 0.0, 0.75, 0.5, 0.25, 0.5] * 6
    state = sprt(weak)
    assert state.decision == "H0"
    assert state.llr <= state.lower
    unclear = [0.75, 0.5, 0.25, 0.75, 0.5, 0.5]
    state = sprt(unclear)
    assert state.decision == "continue" and state.groups == len(unclear)
    # a decided test keeps its verdict
    test = SequentialTest()
    for x in strong:
        test.add(x)
    assert test.state.decision == "H1" and len(test.scores) == MIN_SEQUENTIAL_GROUPS
    with pytest.raises(ValueError):
        SprtConfig(100.0, 0.0)
    with pytest.raises(ValueError):
        SequentialTest().add(1.5)


def test_summarize_counts_wins_draws_and_forfeits() -> None:
    groups = []
    for s in range(12):
        g1 = GameOutcome(s, 0, (30, 20), (1, 2))
        g2 = (
            GameOutcome(s, 1, (25, 25), (1, 1))
            if s % 3
            else GameOutcome(s, 1, (5, 0), (1, 2), "forfeit", (1,))
        )
        groups.append(GroupOutcome(s, (g1, g2)))
    summary = summarize("cand", "base", groups, sprt_config=SprtConfig())
    assert summary.groups == 12 and summary.games == 24 and summary.pairings == 24
    assert summary.forfeits == {"candidate": 4, "baseline": 0}
    assert summary.wins == 12 and summary.draws == 8
    # 12 wins, 8 draws, 4 losses: share (12 + 4) / 24
    assert summary.share.estimate == pytest.approx(16 / 24)
    assert summary.elo.estimate == pytest.approx(elo_from_share(16 / 24))
    data = summary.to_json()
    # the sequential test decided after its minimum number of groups; the estimates use all 12
    assert data["sprt"]["groups"] == MIN_SEQUENTIAL_GROUPS and data["sprt"]["decision"] == "H1"
    assert data["groups"] == 12 and data["elo_method"].startswith("bootstrap")
    assert data["elo"]["estimate"] == pytest.approx(summary.elo.estimate, abs=1e-5)
    with pytest.raises(ValueError):
        summarize("a", "b", [])


def test_wilson_interval_of_a_clean_sweep_reaches_the_share() -> None:
    """Every game won (or lost): the interval's upper (lower) end is exactly 1 (0), so the Elo
    interval's end is +inf (-inf) like the estimate (n = 6 and 9 gave 0.9999999999999999 and an
    Elo interval of [+77, +6261] beside an estimate of +inf)."""
    for n in range(1, 200):
        won, lost = wilson_interval(1.0, n), wilson_interval(0.0, n)
        assert won.high == 1.0 and lost.low == 0.0, n
        assert elo_from_share(won.high) == math.inf and elo_from_share(lost.low) == -math.inf
        assert 0.0 < won.low < 1.0 and 0.0 < lost.high < 1.0


def test_a_clean_sweep_of_many_groups_gets_wilsons_interval_not_a_point() -> None:
    """14 groups all won resample to a share of 1 every time: the bootstrap's interval was
    [1.000, 1.000] (Elo [+inf, +inf]); Wilson's leaves room below 1 (and above 0 for all lost)."""
    won = [
        GroupOutcome(s, (GameOutcome(s, 0, (30, 1), (1, 2)), GameOutcome(s, 1, (1, 30), (2, 1))))
        for s in range(14)
    ]
    iv, method = share_interval(won)
    assert method.startswith("Wilson") and iv.estimate == 1.0 and iv.high == 1.0 and iv.low < 0.9
    lost = [
        GroupOutcome(s, (GameOutcome(s, 0, (1, 30), (2, 1)), GameOutcome(s, 1, (30, 1), (1, 2))))
        for s in range(14)
    ]
    iv, method = share_interval(lost)
    assert method.startswith("Wilson") and iv.estimate == 0.0 and iv.low == 0.0 and iv.high > 0.1
