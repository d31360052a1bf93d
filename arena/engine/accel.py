"""Optional compiled accelerators: C copies of pure-Python code that stays the definition.

:func:`load` is the one place that decides whether one is used: not when ``ARENA_PURE_PYTHON`` is
set (non-empty), not when it was not built (no C compiler at install time), and not when it does
not accept the Python module's configuration (a build older or newer than the Python code).
Standard library only, like the rest of the engine.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Final, TypeVar

T = TypeVar("T")

#: Set (non-empty) to run the pure-Python definitions instead of any compiled copy.
PURE_PYTHON_ENV: Final = "ARENA_PURE_PYTHON"


def load(name: str, configure: Callable[[ModuleType], T]) -> T | None:
    """``configure(module)`` for the compiled module ``name`` (e.g. ``arena.engine._statecopy``),
    or ``None`` when it is not to be used (see the module docstring)."""
    if os.environ.get(PURE_PYTHON_ENV):
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    try:
        return configure(module)
    except (TypeError, ValueError, KeyError):
        return None  # a build that does not match the Python code: not used
