"""The ``--rules`` option shared by the commands that start games (engine, match, tournaments)."""

from __future__ import annotations

import typer

from arena.engine.variants import DEFAULT, Rules, UnknownRulesError, by_name, variants

RULES_HELP = "rules variant (or released rules version id) to play: " + ", ".join(
    f"{name} ({r.summary})" for name, r in variants().items()
)


def parse_rules(value: str | None) -> Rules:
    """The rules ``--rules VALUE`` names (the standard rules for ``None``); a bad name is a
    :class:`typer.BadParameter` listing the choices."""
    if value is None:
        return DEFAULT
    try:
        return by_name(value)
    except UnknownRulesError as exc:
        raise typer.BadParameter(str(exc), param_hint="--rules") from None
