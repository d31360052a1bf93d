"""Who forfeited is plain to see: the match's ending names the offender, and each seat shows its own
outcome ("won by forfeit" for the seat that did nothing wrong, "forfeited (reason)" for the other).
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import arena.endings

from .helpers import ROOT, run_arena

QUITTER = ROOT / "bots" / "faulty" / "quitter_bot.py"


def test_endings_doctests() -> None:
    result = doctest.testmod(arena.endings)
    assert result.attempted >= 6 and result.failed == 0


def test_match_replays_list_and_show_name_the_offender(home: Path) -> None:
    played = run_arena(["match", "greedy", str(QUITTER), "--seed", "3", "--quiet", "--no-sandbox"], home)
    assert "Traceback" not in played.stderr, played.stderr
    table = played.stdout
    assert "end: quitter_bot forfeited (crashed)" in table, table
    greedy_row = next(line for line in table.splitlines() if " greedy " in line)
    quitter_row = next(line for line in table.splitlines() if " quitter_bot " in line)
    assert "won by forfeit" in greedy_row and "forfeit " not in greedy_row.replace("by forfeit", ""), table
    assert "forfeited (crashed)" in quitter_row, table

    listed = run_arena(["replays", "list"], home, COLUMNS="200")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "greedy" in line)
    assert "greedy 0 (1) won by forfeit" in row, listed.stdout
    assert re.search(r"quitter\S* 0 \(2\) forfeited \(crashed\)", row), listed.stdout
    assert re.search(r"quitter\S* forfeited \(crashed\)", row.split("│")[-2]), listed.stdout

    shown = run_arena(["replays", "show", "1"], home)
    assert shown.returncode == 0, shown.stderr
    assert "end: quitter_bot forfeited (crashed)" in shown.stdout, shown.stdout
    assert "forfeit: seat 1 forfeited (crashed)" in shown.stdout, shown.stdout
