"""arena.strength.anatomy: the per-game tally of what a policy does on its turns."""

from __future__ import annotations

import pytest

from arena.strength.anatomy import ROWS, main, play_and_count
from arena.strength.duel import factory


def test_the_tally_adds_up_and_is_reproducible() -> None:
    """Every turn ends in one lounger action or a pass (R19-R23); forced passes by round add up
    to the forced passes; the candidate in every seat of a group; the same seeds, the same tally."""
    a = play_and_count(factory("greedy"), factory("greedy-naive"), 2, 3, 11)
    for tally in (a.candidate, a.baseline):
        assert tally.games == 6  # 3 groups x 2 seatings
        actions = sum(tally.per_game(k) for k in ("flip", "reclaim", "invade", "conquer", "take_five"))
        passes = tally.per_game("pass forced") + tally.per_game("pass chosen")
        assert actions + passes == pytest.approx(tally.per_game("turns"))
        assert sum(tally.forced_by_round.values()) == pytest.approx(tally.counts["pass forced"])
        assert tally.per_game("points") > 0
    b = play_and_count(factory("greedy"), factory("greedy-naive"), 2, 3, 11)
    assert dict(a.candidate.counts) == dict(b.candidate.counts)
    # the same policy on both sides of duplicate groups: the same mean seat
    same = play_and_count(factory("greedy"), factory("greedy"), 4, 1, 5)
    for row in ROWS:
        assert same.candidate.per_game(row) == pytest.approx(same.baseline.per_game(row))


def test_the_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["greedy", "random", "--players", "2", "--groups", "1", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["per", "game", "greedy"]
    assert "pass forced" in out and "forced passes by round" in out
    with pytest.raises(SystemExit) as stop:
        main(["greedy", "nonsense"])
    assert stop.value.code == 2
