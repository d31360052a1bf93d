"""Two bots that both die before connecting both forfeit, and neither is credited a win: before,
the first crash decided the match and the other seat "won by forfeit" (an outside review found
each of two broken bots with a win and a rating in the leaderboard).  Real bot processes."""

from __future__ import annotations

from pathlib import Path

from .helpers import run_arena


def _bots(home: Path) -> tuple[Path, Path]:
    syntax = home / "syntax.py"
    syntax.write_text("from arena.sdk import Bot, run\nclass B(Bot)\n    pass\n")
    exits = home / "exits.py"
    exits.write_text("import sys\nsys.exit(0)\n")
    return syntax, exits


def test_a_match_of_two_crashing_bots_has_no_winner(home: Path) -> None:
    syntax, exits = _bots(home)
    played = run_arena(["match", str(syntax), str(exits), "--seed", "1", "--no-sandbox"], home)
    out = " ".join((played.stdout + played.stderr).split())  # the console wraps long lines
    assert "seat 0 (syntax) forfeited: crashed" in out and "seat 1 (exits) forfeited: crashed" in out, out
    assert "won by forfeit" not in out, out


def test_a_tournament_credits_no_wins_for_games_everyone_forfeited(home: Path) -> None:
    syntax, exits = _bots(home)
    run = run_arena(
        ["tournament", "run", str(syntax), str(exits), "greedy", "--games", "1", "--no-sandbox"], home
    )
    assert run.returncode == 0, run.stderr
    board = run_arena(["leaderboard", "--system", "elo"], home)
    rows = {
        line.split("│")[1].strip(): line.split("│") for line in board.stdout.splitlines() if "file:" in line
    }
    assert set(rows) == {"file:syntax.py", "file:exits.py"}, board.stdout
    for cells in rows.values():
        assert cells[6].strip() == "0", board.stdout  # wins: only against each other, all forfeited
