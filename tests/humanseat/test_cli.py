"""``arena play``'s bad usage: a clear message and exit status 2, before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import build_app


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["a", "b", "c", "d"], "give 1 to 3 bots to play against, got 4"),
        (["random", "--seat", "2"], "a 2-player match has seats 0-1"),
        (["random", "greedy", "--players", "2"], "2 bots and you make 3 players"),
        (["random", "--name", "a b"], "bad player name 'a b'"),
        (["nosuchbot", "--no-record"], "no bot 'nosuchbot'"),
        # a clock given with --unlimited was dropped without a word
        (
            ["random", "--unlimited", "--move-time", "5"],
            "--unlimited plays without a clock: leave out --move-time",
        ),
        (["random", "--unlimited", "--bank", "9", "--move-time", "60"], "leave out --move-time and --bank"),
    ],
)
def test_bad_usage_is_refused_with_a_message(args: list[str], says: str) -> None:
    result = CliRunner().invoke(build_app(), ["play", *args])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.replace("│", " ").split())  # (the message's box undone)


def test_unlimited_with_a_clock_is_bad_usage_for_arena_match_too(tmp_path: Path) -> None:
    """The real command, before any bot starts: exit 2, the message; --unlimited alone plays."""
    env = {**os.environ, "ARENA_HOME": str(tmp_path), "COLUMNS": "120"}
    env.pop("ARENA_DATABASE_URL", None)
    arena = str(Path(sys.executable).with_name("arena"))
    bad = subprocess.run(
        [arena, "match", "random", "random", "--unlimited", "--move-time", "0.5", "--no-sandbox"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "--unlimited plays without a clock: leave out --move-time" in " ".join(
        bad.stderr.replace("│", " ").split()
    )
    assert not (tmp_path / "arena.db").exists()  # refused before anything was made
    good = subprocess.run(
        [arena, "match", "random", "random", "--unlimited", "--no-sandbox", "--no-record", "--quiet"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
