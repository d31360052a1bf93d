"""The type column of ``arena ... --help``, made for readers.

Typer 0.29 shows every parameter's Python type there: ``<bool>`` beside every flag (a flag takes
no value, so this only misleads), ``<list[str]>`` beside a repeated argument (whose name already
ends in ``...``), ``<int range>`` beside a bounded number, and the bound itself even when it is a
machine limit (``[0<=x<=9223372036854775807]`` for a seed).  :func:`install` changes what the
column shows, not what is parsed or checked:

- a flag shows no type;
- a list shows its element's type (``<str>``), a range its number's (``<int>``);
- a bound of 2**40 or more is left out of the range shown (``[x>=0]``); it is still enforced.

Typer offers no setting for this, so :func:`install` replaces two display methods of its
parameter classes.  A Typer without them keeps its own column (no command ever fails over
this), and ``tests/cli/test_help_types.py`` fails, so the change is seen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from typer import core

HUGE = 2**40
"""Range bounds from here up are machine limits, not advice: not shown."""

_installed = False


def _plain_label(label: str) -> str:
    """``<list[str]>`` → ``<str>``, ``<int range>`` → ``<int>``; any other label as it is."""
    label = re.sub(r"^<list\[(.*)\]>$", r"<\1>", label)
    return re.sub(r"^<(\w+) range>$", r"<\1>", label)


def _range_text(low: float | None, high: float | None) -> str | None:
    """The range as Typer writes it, without a bound at or beyond :data:`HUGE`."""
    if high is not None and abs(high) >= HUGE:
        high = None
    if low is not None and abs(low) >= HUGE:
        low = None
    if low is None and high is None:
        return None
    if low is None:
        return f"x<={high}"
    if high is None:
        return f"x>={low}"
    return f"{low}<=x<={high}"


def _display_type(original: Callable[[Any, Any], str | None]) -> Callable[[Any, Any], str | None]:
    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False):
            return None
        label = original(self, ctx)
        return None if label is None else _plain_label(label)

    return display_type_rich


def _range(original: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    def get_number_range_help_str(self: Any) -> str | None:
        if original(self) is None:  # Typer's own reasons for none (a count flag from 0)
            return None
        return _range_text(self.min, self.max)

    return get_number_range_help_str


def install() -> None:
    """Make every ``--help`` of this process show the type column as the module docstring says
    (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    for cls in (getattr(core, "TyperOption", None), getattr(core, "TyperArgument", None)):
        types = getattr(cls, "display_type_rich", None)
        bounds = getattr(cls, "_get_number_range_help_str", None)
        if types is None or bounds is None:  # another Typer: its own column, never a crash
            continue
        setattr(cls, "display_type_rich", _display_type(types))  # noqa: B010 (a method replaced)
        setattr(cls, "_get_number_range_help_str", _range(bounds))  # noqa: B010
