"""The compiled state copy (``arena/engine/_statecopy.c``) against its definition, ``State._copy``:
the same slots (the very same objects), the legal-action cache empty; and the engine's golden
files pass with the pure-Python engine too (``ARENA_PURE_PYTHON=1``), so both are held to them."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from envs.helpers import random_states  # tests/ is on sys.path (its conftest)

from arena.engine import State, legal_actions
from arena.engine import state as state_module
from arena.engine.variants import SPRINT, STANDARD, Rules

ROOT = Path(__file__).resolve().parents[2]
SLOTS = tuple(name for name in State.__slots__ if name != "_legal")


def states(players: int, seed: int, rules: Rules = STANDARD) -> list[State]:
    return random_states(players, seed, rules=rules)


def test_the_compiled_copy_is_built_and_used() -> None:
    assert state_module.clone is not State._copy, (
        "arena/engine/_statecopy.c was not built: run `.venv/bin/python -m pip install -e .` "
        "with a C compiler and the Python headers"
    )


@pytest.mark.parametrize("rules", [STANDARD, SPRINT], ids=["standard", "sprint"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_copy_holds_the_same_objects_and_an_empty_cache(players: int, rules: Rules) -> None:
    for seed in range(5):
        for s in states(players, 300 + seed, rules):
            legal_actions(s)  # fills the original's cache where there is one
            fast, slow = state_module.clone(s), s._copy()
            assert type(fast) is State and fast is not s
            for name in SLOTS:
                assert getattr(fast, name) is getattr(s, name) is getattr(slow, name), name
            assert fast._legal is None and slow._legal is None
            assert fast.key() == s.key()


def test_copies_survive_the_garbage_collector() -> None:
    """Copies made while the cyclic GC runs often, then dropped: no crash, no leak of the slots'
    objects (each copy holds references the collector must see and release)."""
    s = states(4, 17)[200]
    probe = s.towel
    before = sys.getrefcount(probe)
    old = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        copies = [state_module.clone(s) for _ in range(2_000)]
        assert all(c.towel is probe for c in copies)
        assert sys.getrefcount(probe) == before + 2_000
        del copies
        gc.collect()
    finally:
        gc.set_threshold(*old)
    assert sys.getrefcount(probe) == before


def test_anything_but_an_exact_state_is_copied_by_the_method() -> None:
    """A subclass of State (or another object) gets exactly what ``State._copy`` gives it."""

    class Sub(State):
        __slots__ = ()

    original = states(2, 9)[15]
    sub = Sub.__new__(Sub)
    for name in (*SLOTS, "_legal"):
        object.__setattr__(sub, name, getattr(original, name))
    fast, slow = state_module.clone(sub), sub._copy()
    assert type(fast) is type(slow) is State
    assert fast.key() == slow.key() == original.key()
    with pytest.raises(AttributeError):
        state_module.clone(object())  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="players"):
        state_module.clone(State.__new__(State))  # no slot set: the method's error


def test_the_pure_python_engine_passes_the_same_golden_files() -> None:
    env = {**os.environ, "ARENA_PURE_PYTHON": "1"}
    check = "from arena.engine import state; assert state.clone is state.State._copy"
    assert subprocess.run([sys.executable, "-c", check], env=env, cwd=ROOT).returncode == 0
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/engine/test_perft.py", "tests/engine/test_fast_vs_reference.py"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout


def test_accel_load_uses_a_compiled_module_only_when_it_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena.engine.accel.load``, the one switch for both compiled parts: not built, refusing
    its configuration, or ``ARENA_PURE_PYTHON`` set all mean the Python code runs."""
    from arena.engine import accel

    def refuses(module: object) -> object:
        raise ValueError("a build older than the Python code")

    assert accel.load("arena.engine._statecopy", lambda m: m.copy) is not None
    assert accel.load("arena.engine._no_such_module", lambda m: m) is None
    assert accel.load("arena.engine._statecopy", refuses) is None
    monkeypatch.setenv(accel.PURE_PYTHON_ENV, "1")
    assert accel.load("arena.engine._statecopy", lambda m: m.copy) is None
