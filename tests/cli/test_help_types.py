"""The type column of every ``--help`` (``arena.cli.helptypes``): no ``<bool>`` beside a flag, no
``<list[...]>``, no machine limit as a range, while the limits themselves still hold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from arena.cli.helptypes import HUGE, _plain_label, _range_text
from arena.cli.main import build_app

from .helpers import run_arena


def _commands() -> Iterator[list[str]]:
    """Every command's path, groups and nested commands included (Typer's own click copy: its
    groups have ``list_commands``)."""
    root: Any = typer.main.get_command(build_app())
    ctx = root.make_context("arena", [], resilient_parsing=True)
    stack: list[tuple[list[str], Any]] = [([], root)]
    while stack:
        path, command = stack.pop()
        yield path
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    stack.append(([*path, name], sub))


def test_every_help_page_shows_types_for_readers() -> None:
    runner = CliRunner()
    pages = 0
    for path in _commands():
        result = runner.invoke(build_app(), [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        text = result.output
        assert "<bool>" not in text and "list[" not in text and " range>" not in text, (path, text)
        assert "9223372036854775807" not in text and str(2**63) not in text, (path, text)
        pages += 1
    assert pages > 30  # every command and group, the nested ones (tournament run, bots add, ...) too


def test_match_help_in_a_real_process(tmp_path: Path) -> None:
    home = tmp_path
    run = run_arena(["match", "--help"], home, COLUMNS="120")
    assert run.returncode == 0, run.stderr
    seed = next(line for line in run.stdout.splitlines() if "--seed" in line)
    assert "<int> [x>=0]" in seed, seed
    quiet = next(line for line in run.stdout.splitlines() if "--quiet" in line)
    assert "<" not in quiet.split("--no-quiet")[1].split("no progress")[0], quiet  # a flag: no type


def test_the_bounds_left_out_of_the_help_are_still_enforced(tmp_path: Path) -> None:
    home = tmp_path
    run = run_arena(["match", "random", "random", "--seed", str(2**63)], home)
    assert run.returncode == 2 and "--seed" in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("label", "shown"),
    [("<list[str]>", "<str>"), ("<int range>", "<int>"), ("<float range>", "<float>"), ("<path>", "<path>")],
)
def test_labels(label: str, shown: str) -> None:
    assert _plain_label(label) == shown


def test_ranges() -> None:
    assert _range_text(0, 2**63 - 1) == "x>=0"
    assert _range_text(2, 4) == "2<=x<=4"
    assert _range_text(None, 5) == "x<=5"
    assert _range_text(-HUGE, HUGE) is None
    assert _range_text(0.001, None) == "x>=0.001"
