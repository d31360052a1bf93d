"""Chance (rules.md §5, R1): the exact throw distribution and the counter-based dice stream."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from fractions import Fraction
from math import comb

import pytest

from arena.engine import (
    DiceStream,
    make_policy,
    play_game,
    stream_faces,
    throw_distribution,
    throw_distribution_float,
)


def reference_faces(seed: int, turn: int, throw: int) -> tuple[int, ...]:
    """§5 written out independently of the engine."""
    text = str(seed) + ":" + str(turn) + ":" + str(throw)
    digest = hashlib.sha256(text.encode("ascii")).digest()
    usable: list[int] = []
    while len(usable) < 6:
        usable.extend(b for b in digest if b < 252)
        digest = hashlib.sha256(digest).digest()
    return tuple(b % 6 for b in usable[:6])


# --------------------------------------------------------------------------- distribution


@pytest.mark.parametrize("k", range(7))
def test_r1_throw_distribution_sums_to_exactly_one(k: int) -> None:
    dist = throw_distribution(k)
    assert sum(p for _, p in dist) == Fraction(1)
    assert all(isinstance(p, Fraction) and p > 0 for _, p in dist)
    assert len(dist) == comb(k + 5, 5)  # every split of k dice into 6 faces, once
    assert len({c for c, _ in dist}) == len(dist)
    assert all(len(c) == 6 and sum(c) == k for c, _ in dist)


@pytest.mark.parametrize("k", range(4))
def test_r1_throw_distribution_matches_brute_force(k: int) -> None:
    ways = Counter()
    for dice in itertools.product(range(6), repeat=k):
        ways[tuple(dice.count(f) for f in range(6))] += 1
    expected = {c: Fraction(n, 6**k) for c, n in ways.items()}
    assert dict(throw_distribution(k)) == expected


def test_r1_throw_distribution_known_values() -> None:
    d6 = dict(throw_distribution(6))
    assert d6[(6, 0, 0, 0, 0, 0)] == Fraction(1, 6**6)
    assert d6[(1, 1, 1, 1, 1, 1)] == Fraction(720, 6**6)
    assert d6[(0, 0, 0, 0, 0, 6)] == Fraction(1, 46656)
    assert d6[(2, 0, 1, 1, 0, 2)] == Fraction(180, 46656)
    assert dict(throw_distribution(0)) == {(0, 0, 0, 0, 0, 0): Fraction(1)}


@pytest.mark.parametrize("k", [-1, 7, 12])
def test_r1_throw_distribution_rejects_bad_k(k: int) -> None:
    with pytest.raises(ValueError):
        throw_distribution(k)


@pytest.mark.parametrize("k", range(7))
def test_r1_float_distribution_matches_exact(k: int) -> None:
    exact = throw_distribution(k)
    approx = throw_distribution_float(k)
    assert [c for c, _ in approx] == [c for c, _ in exact]
    assert all(abs(p - float(q)) < 1e-15 for (_, p), (_, q) in zip(approx, exact, strict=True))
    assert abs(sum(p for _, p in approx) - 1.0) < 1e-12


# --------------------------------------------------------------------------- dice stream


@pytest.mark.parametrize(
    ("key", "faces"),
    [
        ((0, 1, 1), (1, 2, 3, 0, 2, 0)),
        ((42, 3, 2), (3, 1, 2, 1, 2, 1)),
        ((2**63 - 1, 100, 7), (5, 3, 2, 2, 3, 2)),
        ((1, 1, 1), (5, 0, 3, 2, 0, 4)),
        ((123456789, 17, 4), (2, 1, 4, 2, 0, 2)),
        ((27, 1, 1), (3, 1, 4, 3, 5, 0)),  # fifth byte is 252: skipped
        ((9293, 1, 1), (2, 1, 5, 3, 3, 3)),  # first two bytes 254, 253: skipped
    ],
)
def test_section5_stream_faces_pinned_values(key: tuple[int, int, int], faces: tuple[int, ...]) -> None:
    assert stream_faces(*key) == faces
    assert reference_faces(*key) == faces


def test_section5_stream_faces_hand_computed_first_key() -> None:
    # SHA-256("0:1:1") starts 6d 38 e1 42 1a f0: 109, 56, 225, 66, 26, 240 -> mod 6
    digest = hashlib.sha256(b"0:1:1").digest()
    assert list(digest[:6]) == [0x6D, 0x38, 0xE1, 0x42, 0x1A, 0xF0]
    assert stream_faces(0, 1, 1) == (109 % 6, 56 % 6, 225 % 6, 66 % 6, 26 % 6, 240 % 6)


def test_section5_stream_faces_match_the_reference_on_many_keys() -> None:
    keys = [
        (seed, t, k) for seed in (0, 1, 2, 99, 2**40 + 3, 2**63 - 2) for t in range(1, 30) for k in (1, 2, 9)
    ]
    for key in keys:
        assert stream_faces(*key) == reference_faces(*key), key


def test_section5_bytes_from_252_are_skipped_and_251_is_not() -> None:
    skipped = kept = None
    for seed in range(10_000):
        head = hashlib.sha256(f"{seed}:1:1".encode()).digest()[:6]
        if skipped is None and 252 in head:
            skipped = seed
        if kept is None and 251 in head and not any(b >= 252 for b in head):
            kept = seed
        if skipped is not None and kept is not None:
            break
    assert skipped is not None and kept is not None
    head = hashlib.sha256(f"{skipped}:1:1".encode()).digest()
    naive = tuple(b % 6 for b in head[:6])
    faces = stream_faces(skipped, 1, 1)
    assert faces != naive
    assert faces == tuple(b % 6 for b in head if b < 252)[:6]
    head = hashlib.sha256(f"{kept}:1:1".encode()).digest()
    assert stream_faces(kept, 1, 1) == tuple(b % 6 for b in head[:6])
    assert 251 % 6 in stream_faces(kept, 1, 1)


def test_section5_stream_is_a_pure_function_of_the_key() -> None:
    assert stream_faces(5, 2, 3) == stream_faces(5, 2, 3)
    assert stream_faces(5, 2, 3) != stream_faces(5, 3, 2)  # "5:2:3" and "5:3:2" differ
    # every face value appears, and roughly uniformly (deterministic: fixed keys)
    counts = Counter(f for t in range(1, 3001) for f in stream_faces(77, t, 1))
    assert sorted(counts) == [0, 1, 2, 3, 4, 5]
    assert all(abs(n - 3000) < 300 for n in counts.values()), counts


@pytest.mark.parametrize("seed", [-1, 2**63, 2**64])
def test_section5_seed_out_of_range_raises(seed: int) -> None:
    with pytest.raises(ValueError):
        stream_faces(seed, 1, 1)
    with pytest.raises(ValueError):
        DiceStream(seed)
    with pytest.raises(ValueError):
        play_game(seed, [make_policy("greedy", 0, 0), make_policy("greedy", 0, 1)])


def test_section5_seed_limits_are_accepted() -> None:
    assert len(stream_faces(0, 1, 1)) == 6
    assert len(stream_faces(2**63 - 1, 1, 1)) == 6


def test_section5_dice_stream_throw_is_the_first_k_faces() -> None:
    stream = DiceStream(42)
    assert stream.seed == 42
    for k in range(7):
        assert stream.throw(3, 2, k) == stream_faces(42, 3, 2)[:k]
    assert stream.throw(3, 2, 4) == (3, 1, 2, 1)


def test_section5_game_uses_turn_and_throw_counters() -> None:
    """play_game's first game throw is stream (seed, turn 1, throw 1), all six dice."""
    seed = 2024
    game = play_game(seed, [make_policy("greedy", seed, s) for s in range(2)])
    lines = game.record.splitlines()
    first_throw = next(ln for ln in lines if '"throw"' in ln)
    names = ("green", "purple", "yellow", "red", "blue", "lifeguard")
    expected = "throw " + ",".join(names[f] for f in sorted(reference_faces(seed, 1, 1)))
    assert first_throw == '{"throw": "' + expected + '"}'
