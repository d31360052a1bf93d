"""``arena match`` as a user runs it: the console script in a subprocess, real bots, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from arena.endings import seat_label

from .helpers import child_pids

ARENA = Path(sys.executable).parent / "arena"


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARENA), *args],
        cwd=cwd,
        env={**os.environ, **(env or {}), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_arena_match_runs_and_its_replay_verifies(tmp_path: Path) -> None:
    assert ARENA.exists(), ARENA
    out, logs = tmp_path / "replay.jsonl", tmp_path / "logs"
    before = child_pids()
    args = ["match", "greedy", "random", "--seed", "5", "--out", str(out), "--logs", str(logs)]
    proc = arena(*args, "--move-time", "1", "--bank", "5", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # No bot outlived the command: the test process is the subreaper (conftest.py), so a bot
    # orphaned by `arena` would now be our child.
    assert child_pids(include_zombies=False) - before == set()

    # the replay file
    lines = out.read_text(encoding="utf-8").splitlines()
    head, last = json.loads(lines[0]), json.loads(lines[-1])
    assert head["players"] == 2 and head["seed"] == 5
    assert head["seating"] == ["greedy", "random"]
    assert head["time_control"] == "1s + 5s bank"
    assert last["termination"] in ("normal", "round-cap")
    assert "forfeits" not in last

    # the result table: one row per seat, best first, with the replay's scores and placings
    table = proc.stdout
    for column in ("place", "seat", "bot", "score", "end", "moves", "think", "max"):
        assert column in table
    rows = [
        [cell.strip() for cell in line.strip("│┃ ").split("│")]
        for line in table.splitlines()
        if line.count("│") >= 7
    ]
    assert len(rows) == 2, table
    by_seat = {int(r[1]): r for r in rows}
    for seat, name in enumerate(["greedy", "random"]):
        place, _, bot, score, end, moves, *_ = by_seat[seat]
        assert bot == name
        assert int(score) == last["scores"][seat]
        assert int(place) == last["placings"][seat]
        assert end == seat_label(last["termination"], int(place))  # "finished" / "round cap"
        assert int(moves) > 0
    assert [int(r[0]) for r in rows] == sorted(int(r[0]) for r in rows)
    assert "match 1: greedy vs random  seed 5" in proc.stderr  # stored as match 1 of a fresh database
    # the table names it as the rest of the CLI does (its id, as 'arena replays show 1' takes it)
    assert "match 1 (end: " in table and "match m1" not in proc.stdout + proc.stderr, table
    assert f"replay: {out}" in proc.stderr

    # the bots' logs
    names = sorted(p.name for p in logs.iterdir())
    assert len(names) == 4, names
    assert any(n.endswith("seat0-greedy.stderr.log") for n in names)
    assert any(n.endswith("seat1-random.stdout.log") for n in names)

    verify = arena("engine", "verify", str(out), cwd=tmp_path)
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith(f"OK {out}")
    assert f"result {last['scores']}" in verify.stdout


def test_missing_bot_path_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_bot.py"
    proc = arena(
        "match", "greedy", str(missing), "--seed", "1", "--logs", str(tmp_path / "logs"), cwd=tmp_path
    )
    assert proc.returncode == 2
    assert f"error: {missing}: no such file" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "replays").exists()


def test_one_bot_is_a_usage_error(tmp_path: Path) -> None:
    proc = arena("match", "greedy", "--seed", "1", cwd=tmp_path)
    assert proc.returncode == 2
    assert "a match needs 2 to 4 bots, got 1" in proc.stderr
    assert "Usage" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_five_bots_is_a_usage_error(tmp_path: Path) -> None:
    proc = arena("match", *["random"] * 5, cwd=tmp_path)
    assert proc.returncode == 2
    assert "a match needs 2 to 4 bots, got 5" in proc.stderr
