"""The fast rating paths give the numbers the old code gave (issue 20: a full leaderboard refit over
10,000 matches in well under a second, without changing what it shows).

The old code is kept verbatim in ``ratings_reference.py``. Bit-identical where the operations are
the same (the point Elo, OpenSkill, the Plackett-Luce fit); the Elo bootstrap is computed another
way (one ``tanh`` per seat pair, matrix products), so it is pinned to 1e-9 rating points. Two kinds
of data: synthetic Plackett-Luce games with ties, duplicate-dice groups and 2-4 seats, and matches
stored in a real SQLite database (the benchmark's bulk fill) read back through the store.
"""

from __future__ import annotations

import gc
import importlib.util
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ratings_reference as ref
from ratings_synth import synthetic_games

from arena.leaderboard import gc_paused, leaderboard
from arena.ratings import (
    GameResult,
    OpenSkillParams,
    RatingInputError,
    Skill,
    elo_ratings,
    elo_replicates,
    fit_plackett_luce,
    openskill_ratings,
    plackett_luce_update,
    rate,
    resample_counts,
)
from arena.ratings.elo import _replicate_steps
from arena.ratings.plackett_luce import PLFit
from arena.store.db import Database
from arena.store.results import game_results

TOLERANCE = 1e-9
"""Largest difference allowed where the computation changed (rating points)."""


def _with_ties(games: list[GameResult]) -> list[GameResult]:
    """Every seventh game's two best placings made a tie (and one 4-seat game an all-way tie)."""
    out = []
    for g, game in enumerate(games):
        if g % 7 == 3:
            top = sorted(game.placings)[1]
            placings = tuple(1 if p <= top else p for p in game.placings)
            game = GameResult(game.players, placings, game.scores, game.game_id, game.group)
        if g == 11 and game.n_players == 4:
            game = GameResult(game.players, (1, 1, 1, 1), game.scores, game.game_id, game.group)
        out.append(game)
    return out


def synthetic() -> list[GameResult]:
    strengths = {"alpha": 0.9, "bravo": 0.4, "charlie": 0.0, "delta": -0.3, "echo": -0.6, "fox": 0.2}
    return _with_ties(synthetic_games(900, seed=20, strengths=strengths, sizes=(2, 3, 4), group_size=3))


@pytest.fixture(scope="module")
def stored_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    """1,500 matches stored in bulk in a fresh SQLite database (the benchmark's fill)."""
    # benchmarks/web.py by its path, under a name of its own: "web" is also the tests/web package,
    # imported first when the whole suite runs
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "web.py"
    spec = importlib.util.spec_from_file_location("arena_benchmark_web", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fill = module.fill
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("ARENA_HOME", str(tmp_path_factory.mktemp("fastpaths")))
        mp.delenv("ARENA_DATABASE_URL", raising=False)
        db = Database()
        fill(db, 1500)
        yield db
        db.close()
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def stored(stored_db: Database) -> list[GameResult]:
    """The stored matches read back as rating inputs."""
    games = game_results(stored_db)
    assert len(games) == 1500
    return games


def _datasets(stored: list[GameResult]) -> dict[str, list[GameResult]]:
    return {"synthetic": synthetic(), "stored": stored}


def test_point_elo_is_bit_identical(stored: list[GameResult]) -> None:
    for name, games in _datasets(stored).items():
        assert elo_ratings(games).ratings == ref.elo_ratings(games).ratings, name


def test_elo_replicates_match_the_reference(stored: list[GameResult]) -> None:
    for name, games in _datasets(stored).items():
        counts = resample_counts(games, 60, seed=3)
        bots, new = elo_replicates(games, counts)
        ref_bots, old = ref.elo_replicates(games, counts)
        assert bots == ref_bots
        assert np.array_equal(np.isnan(new), np.isnan(old)), name
        assert np.nanmax(np.abs(new - old)) <= TOLERANCE, name
        assert np.isnan(new).sum() < new.size  # not vacuous


def test_elo_replicates_match_the_reference_with_games_missing_and_repeated() -> None:
    """Hand-made multiplicities: a replicate without some bots (NaN), one game drawn five times,
    one empty replicate, and a mix of 2- and 4-seat games (padding)."""
    games = synthetic()[:40]
    counts = np.zeros((4, len(games)), dtype=np.int32)
    counts[0, :] = 1
    counts[1, 5] = 5
    counts[1, 7] = 2
    counts[3, ::3] = 2
    _, new = elo_replicates(games, counts)
    _, old = ref.elo_replicates(games, counts)
    assert np.array_equal(np.isnan(new), np.isnan(old))
    assert np.isnan(new[2]).all()  # the empty replicate
    assert np.nanmax(np.abs(new - old)) <= TOLERANCE


def test_replicate_steps_replay_each_replicate_in_order() -> None:
    counts = np.array([[2, 0, 1], [0, 0, 0], [1, 3, 0]])
    steps = _replicate_steps(counts)
    assert steps.tolist() == [[0, 0, 2, 3], [3, 3, 3, 3], [0, 1, 1, 1]]  # 3 = the no-op game


def _same_fit(new: PLFit, old: PLFit, exact: bool) -> None:
    assert list(new.ratings) == list(old.ratings)
    assert list(new.seat_advantage) == list(old.seat_advantage)
    pairs = [*zip(new.ratings.values(), old.ratings.values(), strict=True)]
    pairs += [*zip(new.seat_advantage.values(), old.seat_advantage.values(), strict=True)]
    for a, b in pairs:
        for x, y in ((a.value, b.value), (a.lo, b.lo), (a.hi, b.hi)):
            if math.isnan(y):  # no replicates: no interval
                assert math.isnan(x), (a, b)
            else:
                assert (x == y) if exact else math.isclose(x, y, rel_tol=0.0, abs_tol=TOLERANCE), (a, b)
    assert new.iterations == old.iterations
    assert new.log_likelihood == old.log_likelihood


def test_plackett_luce_fit_is_bit_identical(stored: list[GameResult]) -> None:
    for games in _datasets(stored).values():
        _same_fit(fit_plackett_luce(games, n_resamples=0), ref.fit_plackett_luce(games, n_resamples=0), True)


def test_plackett_luce_bootstrap_matches_the_reference(stored: list[GameResult]) -> None:
    """Same numbers to 1e-9: a replicate keeps the patterns none of its games drew (weight 0),
    which adds exact zeros everywhere but in the line search's objective (a longer dot product).
    The fit puts the games in its canonical order before it draws (its intervals do not depend on
    the order given); the reference draws in the order given, so it gets them in that order."""
    for games in _datasets(stored).values():
        _same_fit(
            fit_plackett_luce(games, n_resamples=40),
            ref.fit_plackett_luce(_canonical(games), n_resamples=40),
            False,
        )
    games = synthetic()
    new = fit_plackett_luce(games, n_resamples=30, anchor="charlie", seat_effects=False, seed=9)
    _same_fit(
        new,
        ref.fit_plackett_luce(
            _canonical(games), n_resamples=30, anchor="charlie", seat_effects=False, seed=9
        ),
        False,
    )


def _canonical(games: list[GameResult]) -> list[GameResult]:
    return sorted(games, key=lambda g: (g.group, g.game_id, g.players, g.placings, g.scores))


def test_openskill_is_bit_identical(stored: list[GameResult]) -> None:
    params = OpenSkillParams(tau=25.0 / 300.0)
    for games in _datasets(stored).values():
        for p in (None, params):
            new, old = openskill_ratings(games, p), ref.openskill_ratings(games, p)
            assert {b: (s.mu, s.sigma) for b, s in new.ratings.items()} == {
                b: (s.mu, s.sigma) for b, s in old.ratings.items()
            }
            assert new.games == old.games
    skills = [Skill(30.0, 5.0), Skill(20.0, 8.0), Skill(25.0, 1.0), Skill(28.0, 3.0)]
    for placings in ((1, 2, 3, 4), (2, 1, 1, 4), (1, 1, 1, 1), (4, 3, 2, 1)):
        assert plackett_luce_update(skills, list(placings)) == ref.plackett_luce_update(skills, placings)


def test_rate_gives_the_reference_table(stored: list[GameResult]) -> None:
    """What a leaderboard shows: every system's rows, in the same order, the same numbers."""
    games = stored
    settings = {"n_resamples": 50, "seed": 1}
    old_pl = ref.fit_plackett_luce(_canonical(games), **settings)
    old_elo = ref.elo_ratings(games)
    bots, reps = ref.elo_replicates(games, resample_counts(games, **settings))
    lo, hi = ref.percentile_interval(reps, 0.95)
    expected = {
        "pl": {b: (e.value, e.lo, e.hi) for b, e in old_pl.ratings.items()},
        "elo": {b: (old_elo.ratings[b], lo[i], hi[i]) for i, b in enumerate(bots)},
    }
    for system, want in expected.items():
        rows = rate(games, system, **settings)
        order = sorted(want, key=lambda b: (-want[b][1], -want[b][0], b))  # by lower bound
        assert [r.bot for r in rows] == order
        for r in rows:
            for x, y in zip((r.rating, r.lo, r.hi), want[r.bot], strict=True):
                assert math.isclose(x, y, rel_tol=0.0, abs_tol=TOLERANCE)


def test_cached_rankings_still_refuse_bad_placings() -> None:
    """GameResult checks a standard ranking once per distinct placings: a placings tuple that
    compares equal to a valid one but holds a bool, or a bad one seen twice, is still refused."""
    GameResult(("a", "b"), (1, 2), (1.0, 0.0))
    with pytest.raises(RatingInputError, match="placings must be ints"):
        GameResult(("a", "b"), (True, 2), (1.0, 0.0))
    for _ in range(2):
        with pytest.raises(RatingInputError, match="standard competition ranking"):
            GameResult(("a", "b", "c"), (1, 3, 3), (0.0, 0.0, 0.0))
    game = GameResult(["a", "b"], [1, 1], [np.float64(2.5), 3])
    assert game.players == ("a", "b") and type(game.placings) is tuple
    assert [type(s) for s in game.scores] == [float, float] and game.scores == (2.5, 3.0)


def test_a_refit_runs_no_garbage_collection(stored_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refit's 10,000s of small objects make no reference cycles: the cyclic collector is
    paused for it (it took a quarter to a third of the refit's time), and resumed after it.

    Only passes that start *inside* the refit count: before and after it, the test process's
    other threads (left by earlier tests) may allocate enough for a pass of their own at this
    low threshold (a loaded clean-clone run saw two, [0, 0], around the refit)."""
    import arena.leaderboard as lb

    collections: list[int] = []
    inside: list[bool] = [False]
    enabled_inside: list[bool] = []
    refit = lb._refit

    def watched(*args: Any, **kwargs: Any) -> Any:
        inside[0] = True
        enabled_inside.append(gc.isenabled())
        try:
            return refit(*args, **kwargs)
        finally:
            enabled_inside.append(gc.isenabled())
            inside[0] = False

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and inside[0]:
            collections.append(info["generation"])

    monkeypatch.setattr(lb, "_refit", watched)
    threshold = gc.get_threshold()
    gc.set_threshold(100)  # without the pause: a collection every 100 objects, hundreds here
    gc.callbacks.append(count)
    try:
        rows = leaderboard(stored_db, system="openskill")
        assert enabled_inside == [False, False]  # off for the whole refit
        assert collections == [], collections  # so not one pass while it ran
        assert gc.isenabled()
        inside[0] = True  # from here on every pass counts: the collector is back on
        [object() for _ in range(5)]
        junk = [[] for _ in range(300)]  # containers: the collector runs again
        assert collections, "the collector stayed off after the refit"
        del junk
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
    assert len(rows) == 6


def test_gc_paused_nests_across_threads_and_keeps_a_disabled_collector_off() -> None:
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with gc_paused():
        thread.start()
        assert inside.wait(10)
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's block is still open
    leave.set()
    thread.join(10)
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # off before: stays off
    finally:
        gc.enable()
