"""The plain progress line of a tournament run (stderr not a terminal): its rate counts only the
matches played in this run (a resume starts with some done), and the bot it names is named for
what it is, the top win share so far (the final table ranks by rating, which may differ)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from arena.referee.result import MatchResult, SeatOutcome
from arena.tournament import display as display_module
from arena.tournament.display import TournamentDisplay
from arena.tournament.runner import Progress


def _result(names: list[str], placings: list[int]) -> MatchResult:
    seats = tuple(
        SeatOutcome(k, n, 10 - p, p, "normal", "", 0.1, 0.05, 3)
        for k, (n, p) in enumerate(zip(names, placings, strict=True))
    )
    return MatchResult("m", 7, len(names), "normal", seats, "a replay\n")


def test_rate_after_a_resume_and_the_named_bot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(display_module.time, "monotonic", lambda: clock[0])
    quiet = Console(file=io.StringIO(), force_terminal=False)
    with TournamentDisplay("tournament 9", console=quiet, total=128, done=40, interval=0.0) as shown:
        clock[0] += 10.0  # ten seconds, twenty matches of this run
        for k in range(20):
            shown(Progress(9, 128, 41 + k, 0, _result(["a", "b"], [1, 2] if k % 4 else [2, 1]), None))
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "tournament 9: 60/128 matches done (2.0/s); top win share: a (0.75)", last
