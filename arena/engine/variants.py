"""Rules as a value: every released rules version, and the variants a tournament can choose.

A :class:`Rules` holds the parameters that differ between rules versions; the game state carries
one (``State.rules``) and the rules engine reads it where R25 and R26 apply.  Every version ever
released stays in :data:`RELEASED`, keyed by its version id, so a game record replays under the
rules it was played with (its header's ``"rules"`` field), whatever the current default is.

Where to add a game variant: define one more :class:`Rules` here with a new, never reused
``version`` id and a ``variant`` name, add it to :data:`RELEASED`, and document it as a variant
section of ``docs/rules.md``.  A released version is never changed: a change of rules is a new
version (of the same variant name), and :func:`by_name` then picks the newest one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .board import END_UNOCCUPIED, ROUND_CAP
from .errors import EngineError


class UnknownRulesError(EngineError, ValueError):
    """A rules version id or variant name that this engine does not know."""


@dataclass(frozen=True, slots=True)
class Rules:
    """One released rules version.

    * ``version``: the id written in game records (``"rules"``) and sent in the Welcome
      (``rules_version``); never reused for different parameters;
    * ``variant``: the short name users choose (``--rules standard``); several versions of one
      variant may exist, the newest is the one new games use;
    * ``end_unoccupied``: R25, the final round starts once at most this many of the 26 loungers
      are unoccupied;
    * ``round_cap``: R26, the game ends after this many rounds;
    * ``summary``: one line for people (CLI, web).
    """

    version: str
    variant: str
    end_unoccupied: int
    round_cap: int
    summary: str

    def __post_init__(self) -> None:
        if not self.version or not self.variant:
            raise ValueError("a rules version needs a version id and a variant name")
        if not 0 <= self.end_unoccupied < 26 or self.round_cap < 1:
            raise ValueError(f"rules {self.version!r}: end_unoccupied 0..25 and round_cap >= 1 required")

    def describe(self) -> str:
        """``standard (rules 1): ...`` for messages and pages."""
        return f"{self.variant} (rules {self.version}): {self.summary}"


STANDARD: Final = Rules(
    version="1",
    variant="standard",
    end_unoccupied=END_UNOCCUPIED,
    round_cap=ROUND_CAP,
    summary=f"final round at <= {END_UNOCCUPIED} unoccupied loungers, at most {ROUND_CAP} rounds",
)

SPRINT: Final = Rules(
    version="sprint-1",
    variant="sprint",
    end_unoccupied=10,
    round_cap=40,
    summary="a short game: final round at <= 10 unoccupied loungers, at most 40 rounds",
)

#: Every released rules version by version id (oldest first within a variant).
RELEASED: Final[dict[str, Rules]] = {r.version: r for r in (STANDARD, SPRINT)}

#: The rules new games use when nobody chooses.
DEFAULT: Final = STANDARD


def variants() -> dict[str, Rules]:
    """The newest released version of every variant, by variant name."""
    out: dict[str, Rules] = {}
    for r in RELEASED.values():
        out[r.variant] = r
    return out


def by_version(version: str) -> Rules:
    """The released rules with version id ``version``; :class:`UnknownRulesError` otherwise."""
    try:
        return RELEASED[version]
    except (KeyError, TypeError):
        known = ", ".join(repr(v) for v in RELEASED)
        raise UnknownRulesError(
            f"rules version {version!r} is not known to this engine (known: {known})"
        ) from None


def by_name(name: str) -> Rules:
    """The rules a user means by ``name``: a variant name (its newest version) or a version id.

    Raises :class:`UnknownRulesError` naming the choices.
    """
    found = variants().get(name) or RELEASED.get(name)
    if found is None:
        choices = ", ".join(sorted(variants()))
        raise UnknownRulesError(
            f"unknown rules {name!r}: choose a variant ({choices}) or a released version id "
            f"({', '.join(RELEASED)})"
        )
    return found


def rules_label(version: str | None) -> str:
    """``sprint (sprint-1)`` for a stored rules version id (``None``: the standard rules, as
    stored before rules versions were recorded); an unknown id is shown as such."""
    try:
        r = by_version(version or DEFAULT.version)
    except UnknownRulesError:
        return f"{version} (unknown to this engine)"
    return f"{r.variant} ({r.version})"
