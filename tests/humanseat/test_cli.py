"""``arena play``'s bad usage: a clear message and exit status 2, before anything starts."""

from __future__ import annotations

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
    ],
)
def test_bad_usage_is_refused_with_a_message(args: list[str], says: str) -> None:
    result = CliRunner().invoke(build_app(), ["play", *args])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split())
