"""Every command's usage line names its arguments in capitals, as its help text does
(``arena match [OPTIONS] {BOT}...``): they read ``{bots}...``, ``{name} [path]``, and
``[[ID|FILE]...]...`` with the repetition twice (a newcomer review)."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.testing import CliRunner

from arena.cli.main import build_app


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every (sub)command path under ``command`` (Typer's own Click: duck-typed)."""
    if not hasattr(command, "list_commands"):
        return [path]
    ctx = command.context_class(command)
    found: list[tuple[str, ...]] = []
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            found += _commands(sub, (*path, name))
    return found


def test_usage_lines_name_arguments_in_capitals() -> None:
    app = build_app()
    commands = _commands(typer.main.get_command(app))
    assert len(commands) >= 30, commands
    runner = CliRunner()
    for command in commands:
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (command, result.output)
        usage = next(line for line in result.output.splitlines() if "Usage:" in line).strip()
        assert "[[" not in usage and "]...]..." not in usage, usage
        assert not re.search(r"[{\[][a-z_]+[}\]]", usage), usage  # a lower-case parameter name
