"""The compiled observation encoder (``arena/envs/_obsfast.c``) against the definition,
``observation.encode_python``: the same vector bit for bit on every state of many games, every
seat, both rule variants; bad input gets the Python encoder's own errors; concurrent use from
threads stays exact."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import State
from arena.engine.variants import SPRINT, STANDARD, Rules
from arena.envs import observation
from arena.envs.observation import encode, encode_python

from .helpers import ROOT, random_states


def game_states(players: int, seed: int, rules: Rules = STANDARD) -> list[State]:
    """Every state of a random game (decisions, chance nodes and the end)."""
    return random_states(players, seed, rules=rules)


def assert_same(state: State, seat: int) -> None:
    fast, slow = encode(state, seat), encode_python(state, seat)
    assert fast.dtype == slow.dtype == np.float32 and fast.shape == slow.shape
    assert fast.tobytes() == slow.tobytes(), (state, seat, np.flatnonzero(fast != slow))


def test_the_compiled_encoder_is_built_and_used() -> None:
    """``./dev`` installs with a C compiler (gcc is on every machine it runs on), so the compiled
    encoder is what ``encode`` is; without one the install still works on the Python encoder."""
    assert observation.ENCODER == "compiled", (
        "arena/envs/_obsfast.c was not built: run `.venv/bin/python -m pip install -e .` "
        "with a C compiler and the Python headers"
    )
    assert encode is not encode_python


@pytest.mark.parametrize("rules", [STANDARD, SPRINT], ids=["standard", "sprint"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_compiled_encoder_gives_the_definitions_vector_on_every_state(players: int, rules: Rules) -> None:
    for seed in range(12):
        for state in game_states(players, 7_000 + seed, rules):
            for seat in range(players):
                assert_same(state, seat)


@settings(max_examples=30, deadline=None)
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 2**63 - 1),
    order=st.permutations(range(4)),
)
def test_any_game_any_order_of_seats(players: int, seed: int, order: list[int]) -> None:
    """The board part is cached per seat: asking in any order of seats, and skipping states,
    must not matter."""
    seats = [k for k in order if k < players]
    rng = random.Random(seed)
    for state in game_states(players, seed):
        if rng.random() < 0.5:
            for seat in seats:
                assert_same(state, seat)


def test_every_call_returns_a_new_writable_array() -> None:
    state = game_states(3, 11)[40]
    first = encode(state, 1)
    first[:] = 7.0
    second = encode(state, 1)
    assert second.flags.writeable and not np.shares_memory(first, second)
    assert second.tobytes() == encode_python(state, 1).tobytes()


def test_bad_input_gets_the_python_encoders_errors() -> None:
    state = game_states(2, 5)[10]
    for seat in (2, -1, 4, 10**30):
        with pytest.raises(ValueError, match=r"seat must be 0\.\.1 for 2 players"):
            encode(state, seat)
    with pytest.raises(AttributeError):
        encode(object(), 0)  # type: ignore[arg-type]
    # A seat given as a numpy integer or a bool-free int subclass: encoded all the same.
    assert encode(state, np.int64(1)).tobytes() == encode_python(state, 1).tobytes()  # type: ignore[arg-type]


def test_threads_encoding_different_games_at_once_stay_exact() -> None:
    """The compiled encoder keeps its board cache between calls; threads interleave at the
    scores call (Python code) and must still each get their own game's vector."""
    games = {seed: game_states(2 + seed % 3, 9_100 + seed) for seed in range(4)}
    expected = {
        seed: [[encode_python(s, seat).tobytes() for seat in range(s.players)] for s in states]
        for seed, states in games.items()
    }
    wrong: list[tuple[int, int]] = []

    def work(seed: int) -> None:
        for _ in range(3):
            for k, state in enumerate(games[seed]):
                for seat in range(state.players):
                    if encode(state, seat).tobytes() != expected[seed][k][seat]:
                        wrong.append((seed, k))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in games]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert wrong == []


def test_arena_pure_python_selects_the_python_encoder() -> None:
    env = {**os.environ, "ARENA_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", "from arena.envs import observation as o; print(o.ENCODER)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "python"


FIELDS = (
    "players",
    "phase",
    "seat",
    "round",
    "turn",
    "throw_no",
    "dice",
    "kept",
    "last",
    "result",
    "guard",
    "towel",
    "secured",
    "figure",
    "towels",
    "figures",
    "chips",
    "pool",
    "occupied",
    "final_round",
)
JUNK = st.one_of(
    st.integers(-3, 30),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.lists(st.one_of(st.integers(-3, 8), st.booleans(), st.none()), max_size=30).map(tuple),
)


def outcome(encoder: Callable[[State, int], np.ndarray], state: State, seat: int) -> tuple[str, bytes]:
    try:
        return "ok", encoder(state, seat).tobytes()
    except Exception as exc:  # the kind of failure is what must agree
        return type(exc).__name__, b""


@settings(max_examples=int(os.environ.get("OBSFAST_FUZZ", "400")), deadline=None)
@given(
    start=st.integers(0, 300),
    seat=st.integers(-1, 4),
    changes=st.lists(st.tuples(st.sampled_from(FIELDS), JUNK), min_size=1, max_size=3),
)
def test_states_with_junk_in_their_slots_get_the_python_encoders_answer(
    start: int, seat: int, changes: list[tuple[str, object]]
) -> None:
    """Fuzz: a state whose slots hold anything (a caller can build one with ``State.__new__``)
    gets from the compiled encoder exactly what the Python encoder gives: the same vector, or an
    exception of the same type (the compiled one hands whatever it cannot vouch for to the Python
    one), and never a crash.  ``OBSFAST_FUZZ=20000 pytest --timeout 0 -k junk`` runs more than
    the suite's 400."""
    states = game_states(3, 4_242)
    base = states[start % len(states)]
    state = base._copy()
    for name, value in changes:
        object.__setattr__(state, name, value)
    assert outcome(encode, state, seat) == outcome(encode_python, state, seat)


def test_a_build_that_does_not_match_the_layout_is_refused_and_not_used() -> None:
    """The C file writes the layout piece by piece; ``configure`` compares it with
    ``observation.LAYOUT`` and refuses any difference (a stale build is never run past its
    buffer), and then ``observation`` uses the Python encoder."""
    from arena.envs import _obsfast

    good = observation._compiled_settings()
    layout = good["layout"]
    assert isinstance(layout, tuple)
    try:
        for bad in (
            layout[1:],  # a piece missing
            (layout[1], layout[0], *layout[2:]),  # two pieces swapped
            ((layout[0][0], layout[0][1] + 1), *layout[1:]),  # a piece of another size
        ):
            with pytest.raises(ValueError, match="layout"):
                _obsfast.configure({**good, "layout": bad})
    finally:
        _obsfast.configure(good)
    state = game_states(2, 3)[20]
    assert_same(state, 1)


class LoudInt(int):
    """An int subclass whose arithmetic differs from its value: not what the rules make."""

    def __mul__(self, other: object) -> float:  # type: ignore[override]
        return 0.5

    __rmul__ = __mul__  # type: ignore[assignment]


def test_int_subclasses_go_to_the_python_encoder() -> None:
    state = game_states(3, 8)[30]._copy()
    object.__setattr__(state, "pool", LoudInt(7))
    assert outcome(encode, state, 0) == outcome(encode_python, state, 0)
    assert outcome(encode, state, 0)[0] == "ok"
