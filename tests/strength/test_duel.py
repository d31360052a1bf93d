"""The duel command (``python -m arena.strength.duel``): games come in whole duplicate groups, a
number of games that cannot give an interval is refused, and the help explains the names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.strength.duel", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--games", "0"), "--games must be at least 4 for 2 players"),
        (("--games", "-4"), "--games must be at least 4 for 2 players"),
        (("--games", "3"), "--games must be at least 4 for 2 players"),
        (("--players", "3", "--games", "5"), "--games must be at least 6 for 3 players"),
        (("--players", "5"), "invalid choice"),
        (("--players", "0"), "invalid choice"),
        (("--seed", "-1"), "--seed must be 0 or more"),
        (("--seed", str(2**63 - 1)), "below 2**63"),
        (("--games", "x"), "invalid int value"),
    ],
)
def test_bad_numbers_are_refused_before_any_game(args: tuple[str, ...], message: str) -> None:
    proc = _cli("greedy-naive", "random", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and proc.stderr.startswith("usage:"), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_games_are_rounded_down_to_whole_groups_and_it_says_so() -> None:
    proc = _cli("greedy-naive", "random", "--games", "5", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (
        "note: --games 5 is not a multiple of 2 (one game per seating): playing 4 games in 2 duplicate groups"
    )
    assert "greedy-naive vs random, 2p, 4 games: share" in proc.stdout
    assert "inf" not in proc.stdout.split("score diff")[1]  # two groups give a finite interval
    exact = _cli("greedy-naive", "random", "--games", "4", "--seed", "3")
    assert exact.returncode == 0 and exact.stderr == "", exact.stderr
    assert re.sub(r"\(\d+ s\)", "", exact.stdout) == re.sub(r"\(\d+ s\)", "", proc.stdout)


def test_help_explains_the_names_and_shows_every_default() -> None:
    proc = _cli("--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("usage: python -m arena.strength.duel ")
    for syntax in ("greedy-naive", "search:key=value;...", "search@package.module:name", "duplicate groups"):
        assert syntax in text
    assert "example:\n  python -m arena.strength.duel search greedy" in text
    for default in ("(default: 2)", "(default: 100)", "(default: 1)"):
        assert default in text


@pytest.mark.parametrize("tool", ["duel", "sweep"])
def test_a_tool_started_with_stderr_open_read_only_plays_and_reports(tool: str) -> None:
    """``python -m arena.strength.duel ... 2</dev/null``: the note on stderr (games rounded to
    whole groups) failed with EBADF and the run ended, status 1, with nothing reported.  The
    tools put /dev/null in place of a closed or wrong-way stream, as ``arena`` does."""

    def read_only_stderr() -> None:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 2)
        os.close(null)

    args = (
        ["search", "greedy", "--players", "2", "--games", "5"]
        if tool == "duel"
        else ["--players", "2", "--groups", "2", "--jobs", "1", "search", "greedy"]
    )
    done = subprocess.run(
        [sys.executable, "-m", f"arena.strength.{tool}", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=120,
        preexec_fn=read_only_stderr,
    )  # fmt: skip
    assert done.returncode == 0
    assert "share" in done.stdout
