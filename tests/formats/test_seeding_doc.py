"""``--seeding rating`` says what it ranks by: the ``pl`` rating fitted over every finished
tournament match (what ``arena leaderboard`` shows), not the stored rating history."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from arena.cli.main import build_app


def test_seeding_help_names_the_rating_it_uses() -> None:
    result = CliRunner().invoke(build_app(), ["tournament", "create", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = re.sub(r"[\s│]+", " ", result.output)
    assert "latest stored ratings" not in text
    assert "the pl rating over every finished tournament match" in text
