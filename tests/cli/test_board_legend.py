"""The text board has a legend: ``arena engine show --legend``, and in ``--help``."""

from __future__ import annotations

import re
from pathlib import Path

from arena.engine.render import LEGEND

from .helpers import run_arena

CELL = re.compile(r"^(- *|[0-3][.*]( ?|[0-3]))x?$")  # "-", "- x", "0.", "1*", "3.2", "0.1x", "2. x"
WIDTH = 7  # characters per cell


def test_legend_alone_and_in_help(home: Path) -> None:
    alone = run_arena(["engine", "show", "--legend"], home)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.strip() == LEGEND
    helped = run_arena(["engine", "show", "--help"], home)
    assert helped.returncode == 0
    assert "How to read the board" in helped.stdout and "--legend" in helped.stdout
    for mark in ("0.", "1*", "3.2", "0.1x", "[brackets]", ">seat N"):
        assert mark in helped.stdout, mark


def test_no_file_and_no_legend_is_a_usage_error(home: Path) -> None:
    run = run_arena(["engine", "show"], home)
    assert run.returncode == 2
    assert "--legend" in run.stderr


def test_every_mark_on_the_board_is_in_the_legend(home: Path) -> None:
    """Boards of whole games (2, 3 and 4 players): every lounger cell is one of the legend's forms,
    and each form the legend names occurs."""
    seen: set[str] = set()
    for players in (2, 3, 4):
        record = home / f"g{players}.jsonl"
        seed = str(10 + players)
        played = run_arena(["engine", "play", "-n", str(players), "--seed", seed, "--out", str(record)], home)
        assert played.returncode == 0, played.stderr
        shown = run_arena(["engine", "show", str(record), "--every", "--legend", "--no-color"], home)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(LEGEND)
        for line in shown.stdout[len(LEGEND) :].splitlines():
            if re.match(r"^  [234]   ", line):  # a row of regular loungers: value, then 8 cells
                row = line[6:].ljust(8 * WIDTH)
                cells = [row[k : k + WIDTH].strip() for k in range(0, 8 * WIDTH, WIDTH)]
            elif line.startswith("  pool  "):
                cells = [c.strip() for c in re.findall(r"five-\d:(.*?)(?=  five-|$)", line)]
            else:
                continue
            for cell in cells:
                assert CELL.match(cell), f"{cell!r} in {line!r} is not explained by the legend"
                seen.add(re.sub(r"[0-3]", "N", cell).replace(" ", ""))
    assert {"-", "N.", "N*", "N.N"} <= seen, seen
    assert any(c.endswith("x") for c in seen), seen
