"""What a newcomer's pass (2026-12-05) found in the tournament, evaluation, publishing and training
commands: each case fails without its fix. In-process (Typer's runner) where the command's own
process adds nothing; a real SQLite file in a temporary ARENA_HOME."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.ladder.field import ensure_ladder
from arena.store.db import Database


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def arena(home: Path, *args: str) -> Ran:
    """``arena ARGS`` in this process with ``ARENA_HOME=home``; a Python exception escaping the
    command (a traceback for a user) fails the test."""
    result = CliRunner().invoke(
        app, list(args), env={"ARENA_HOME": str(home), "ARENA_DATABASE_URL": None, "COLUMNS": "250"}
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"arena {' '.join(args)} raised {result.exception!r}") from result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def env_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    return home


@pytest.mark.parametrize("command", ["run", "create"])
def test_the_ladder_is_not_a_tournament_format(env_home: Path, command: str) -> None:
    """``tournament run --format ladder`` played on for ever (the ladder never finishes) and
    ``ladder show`` never found it: refused, pointing to ``arena ladder run``."""
    r = arena(env_home, "tournament", command, "greedy", "random", "--format", "ladder", "--games", "1")
    assert r.code == 2, r
    assert "the ladder never ends: run it with 'arena ladder run'" in r.err
    assert "round-robin, gauntlet, swiss, knockout" in r.err
    help_text = arena(env_home, "tournament", command, "--help").out
    assert "ladder" not in help_text.split("--format", 1)[1].split("\n", 1)[0]


def test_the_ladders_tournament_is_not_started_or_resumed_as_a_tournament(env_home: Path) -> None:
    db = Database()
    try:
        tid = ensure_ladder(db, seed=5).id
    finally:
        db.close()
    for command in ("start", "resume"):
        r = arena(env_home, "tournament", command, str(tid))
        assert r.code == 1, r
        assert f"tournament {tid} (ladder) is a ladder: it never finishes" in r.err, r.err
        assert "'arena ladder run'" in r.err
    shown = arena(env_home, "tournament", "show", str(tid))
    assert "the ladder, not running now; 'arena ladder run' plays it on" in shown.out + shown.err
    assert "resume" not in shown.out + shown.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--elo0", "nan"], "Invalid value for --elo0: nan is not an Elo difference: give a number"),
        (["--elo1", "inf"], "Invalid value for --elo1: inf is not an Elo difference: give a number"),
        (
            ["--logs", "{file}"],
            "error: cannot write {file}: {file} is a file, not a folder; give another path",
        ),
    ],
)
def test_evaluate_refuses_bad_options_before_playing(env_home: Path, args: list[str], message: str) -> None:
    """``--elo0 nan`` and a file as ``--logs`` were Python tracebacks (exit 1); ``--elo1 inf`` was
    taken. Each is a one-line usage error now (exit 2), and nothing is played."""
    a_file = env_home / "notes.txt"
    a_file.write_text("mine\n")
    args = [a.replace("{file}", str(a_file)) for a in args]
    r = arena(env_home, "evaluate", "greedy", "--vs", "random", "--games", "2", *args)
    assert r.code == 2, r
    assert message.replace("{file}", str(a_file)) in r.err, r.err
    assert a_file.read_text() == "mine\n" and not (env_home / "logs").exists()


@pytest.mark.parametrize("content", [b"garbage\n", b"PK\x03\x04" + b"\x00" * 40], ids=["text", "cut-zip"])
def test_train_names_a_damaged_checkpoint_as_such(env_home: Path, content: bytes) -> None:
    """numpy's message for a file that is not an .npz archive suggested unpickling it ("If you
    trust the file ... allow_pickle="), with exit 2; it is a damaged checkpoint: exit 1."""
    bad = env_home / "bad.ckpt.npz"
    bad.write_bytes(content)
    r = arena(env_home, "train", "--games", "10", "--chunk", "10", "--checkpoint", str(bad), "--out", "x.npz")
    assert r.code == 1, r
    assert f"error: cannot read the checkpoint {bad}: " in r.err and "allow_pickle" not in r.err, r.err
    assert "delete it (or give --fresh) to start afresh" in r.err


def test_train_says_it_rounds_games_up_to_whole_chunks_and_needs_held_out_games(env_home: Path) -> None:
    out = env_home / "v.npz"
    r = arena(env_home, "train", "--games", "15", "--chunk", "10", "--heldout", "4", "--steps", "2",
              "--out", str(out), "--quiet")  # fmt: skip
    assert r.code == 0, r
    assert "--games 15 rounded up to 20: training plays whole chunks of 10" in r.err
    assert "trained 20 games" in r.out + r.err
    r = arena(env_home, "train", "--heldout", "0")  # a learning curve of no games printed "nan"
    assert r.code == 2 and "--heldout" in r.err, r


def test_an_interrupted_swiss_does_not_count_its_unmade_rounds_as_nothing_left() -> None:
    """A Swiss or knockout makes each round from the last one's results: 'tournament show' said
    "2 matches left" with three rounds still to be made, and "every match played" between rounds."""
    from arena.tournament.display import tournament_state

    mid = tournament_state(7, "running", {"finished": 6, "queued": 2}, None, "swiss")
    assert mid.startswith(
        "interrupted: no coordinator is running it, 2 matches left of the rounds made so far"
    )
    assert mid.endswith("'arena tournament resume 7' goes on")
    between = tournament_state(7, "running", {"finished": 8}, None, "knockout")
    assert between.startswith("interrupted between rounds; 'arena tournament resume 7' makes the next round")
    fixed = tournament_state(7, "running", {"finished": 8}, None, "round-robin")
    assert fixed == "interrupted with every match played; 'arena tournament resume 7' finishes it"


def test_ctrl_c_in_evaluate_prints_what_was_measured(home: Path) -> None:
    """Ctrl-C during ``arena evaluate`` threw the games already played away (an empty stdout, 130):
    the summary of the complete duplicate groups is printed (here as JSON, marked interrupted),
    then the one interrupt line and 130."""
    import json
    import os
    import signal
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"}
    env["ARENA_HOME"] = str(home)
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "arena"), "evaluate", "greedy", "--vs", "random", "--games", "400",
         "--seed", "1", "--no-sandbox", "--no-sequential", "--json"],
        cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        for line in proc.stderr:  # the progress lines: stop once two groups are complete
            if "groups 2/200" in line:
                break
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    report = json.loads(out)
    assert report["interrupted"] is True and report["planned_groups"] == 200
    assert 2 <= report["groups"] < 200 and report["games"] == 2 * report["groups"], report
    assert "arena: interrupted (Ctrl-C)" in err and "Traceback" not in err
