"""``arena evaluate`` end to end: real bot processes, the referee, the summary and the JSON."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ARENA = str(Path(sys.executable).parent / "arena")
HOME = tempfile.mkdtemp(prefix="arena-eval-home-")  # never the user's database
atexit.register(shutil.rmtree, HOME, True)  # removed when the test run ends


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_HOME": HOME}
    return subprocess.run([ARENA, "evaluate", *args], capture_output=True, text=True, timeout=120, env=env)


def test_evaluate_greedy_vs_random_prints_the_summary() -> None:
    proc = run("greedy", "--vs", "random", "--games", "4", "--seed", "5", "--quiet")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for text in (
        "greedy vs random",
        "pairwise share",
        "Elo difference",
        "score difference",
        "sequential test",
    ):
        assert text in out
    assert "2 / 4 / 4" in out  # groups / games / pairings


def test_evaluate_counts_one_of_a_kind_in_the_singular() -> None:
    proc = run("greedy", "--vs", "random", "--games", "2", "--jobs", "1", "--seed", "3", "--quiet")
    assert proc.returncode == 0, proc.stderr
    said = " ".join((proc.stdout + proc.stderr).split())  # the console wraps at its width
    assert "up to 1 duplicate group (2 games)" in said and ", 1 job, seed 3" in said, said
    assert ") after 1 group: no decision yet" in said, said
    assert "1 jobs" not in said and "1 duplicate groups" not in said and "1 groups" not in said, said


def test_evaluate_four_players_json() -> None:
    proc = run("greedy", "--vs", "random", "--players", "4", "--games", "4", "--seed", "9", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["players"] == 4 and data["groups"] == 1 and data["games"] == 4 and data["pairings"] == 12
    assert data["seeds"] == [9]
    assert 0.0 <= data["share"]["estimate"] <= 1.0
    assert data["sprt"]["decision"] == "continue"  # one group is far too few to decide
    assert data["think_time"]["candidate"]["decisions"] > 0
    assert data["forfeits"] == {"candidate": 0, "baseline": 0}
    assert "games" in proc.stderr  # progress went to stderr, not into the JSON


def test_evaluate_rejects_unknown_bot() -> None:
    proc = run("no-such-bot", "--vs", "random", "--games", "2")
    assert proc.returncode == 2
    assert "no bot 'no-such-bot': not a file" in proc.stderr and "not a sample bot" in proc.stderr


def test_evaluate_stops_early_when_the_sequential_test_decides() -> None:
    proc = run("greedy", "--vs", "random", "--games", "80", "--seed", "21", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["sprt"]["decision"] == "H1"
    assert data["sprt"]["groups"] >= 8  # never before the minimum number of groups
    assert data["stopped_early"] and data["groups"] < 40
    assert data["elo_excludes_zero"]


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]], ids=["sandboxed", "unsandboxed"])
def test_evaluate_replaces_a_crashing_bot(sandbox: list[str]) -> None:
    """A baseline that exits in the middle of every match forfeits each game and is restarted
    before its table's next match (persistent sessions need a live process): every forfeit
    restarts it, whether or not its process (unsandboxed: its guard) has exited yet."""
    quitter = str(Path(__file__).resolve().parents[2] / "bots" / "faulty" / "quitter_bot.py")
    proc = run("greedy", "--vs", quitter, "--games", "6", "--seed", "4", "--json", "--quiet", *sandbox)
    assert proc.returncode == 3, proc.stderr  # played, with forfeits: as 'arena match' says it
    data = json.loads(proc.stdout)
    assert data["games"] == 6
    # the whole report when the candidate forfeited too (once in a CI run under load: its reason)
    assert data["forfeits"] == {"candidate": 0, "baseline": 6}, json.dumps(data, indent=1)
    # every match but the first of each set of kept processes (two tables x two seatings: at most
    # four sets) restarts it
    assert data["bot_restarts"] >= 2
    assert data["share"]["estimate"] == 1.0
    assert data["duration_s"] < 20  # no match waited for a dead bot to connect
    # why it forfeited, with the first game it happened in, and where its stderr went
    [reason] = data["forfeit_reasons"]["baseline"]
    assert reason["reason"] == "crashed" and reason["count"] == 6, reason
    assert reason["first"]["detail"].startswith("the process exited with status"), reason
    assert "candidate" not in data["forfeit_reasons"]
    human = run("greedy", "--vs", quitter, "--games", "2", "--seed", "4", "--quiet", *sandbox)
    assert human.returncode == 3, human.stderr
    text = " ".join((human.stdout + human.stderr).split())  # the console wraps at its width
    assert "baseline: 2 x crashed; the first (seed 4, seat " in text, text
    assert f"the bots' stdout and stderr: {HOME}/logs/evaluate/" in text.replace("/ ", "/"), text
    logs = list(Path(HOME, "logs", "evaluate").glob("*-seed4/*quitter*.stderr.log"))
    assert logs, sorted(Path(HOME).rglob("*.log"))


def test_evaluate_says_when_it_rounds_the_games_up() -> None:
    proc = run("greedy", "--vs", "random", "--games", "3", "--jobs", "1", "--seed", "3", "--quiet")
    assert proc.returncode == 0, proc.stderr
    said = " ".join((proc.stdout + proc.stderr).split())
    assert "up to 2 duplicate groups (4 games, --games 3 rounded up to whole groups)" in said, said
