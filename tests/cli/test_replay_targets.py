"""Replay commands take what the arena hands out: a match id or a game record file.

A newcomer given file paths by the demo tried ``arena replays view/analyse FILE`` and met a bare
"Input should be a valid integer"; a damaged stored replay said what was wrong but not what to do;
a binary file was bad usage (exit 2) for one command and bad data (exit 1) for another.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from .helpers import Run, run_arena


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory with match 1 (greedy against random) stored, and its record as game.jsonl."""
    home = tmp_path_factory.mktemp("targets")
    done = run_arena(["match", "greedy", "random", "--seed", "5", "--out", "game.jsonl"], home)
    assert done.returncode == 0, done.stderr
    (home / "binary.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    return home


def _ok(run: Run) -> Run:
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def test_show_and_analyse_take_a_file_as_well_as_an_id(played: Path) -> None:
    by_file = _ok(run_arena(["replays", "show", "game.jsonl", "--step", "3"], played))
    by_id = _ok(run_arena(["replays", "show", "1", "--step", "3"], played))
    assert by_file.stdout.startswith("game.jsonl (seat 0: greedy, seat 1: random), step 3 of ")
    assert by_id.stdout.startswith("match 1 (seat 0: greedy, seat 1: random), step 3 of ")
    assert by_file.stdout.split("\n", 1)[1] == by_id.stdout.split("\n", 1)[1]  # the same board

    file_analysis = json.loads(_ok(run_arena(["replays", "analyse", "game.jsonl", "--json"], played)).stdout)
    id_analysis = json.loads(_ok(run_arena(["replays", "analyse", "1", "--json"], played)).stdout)
    assert file_analysis["match"] is None and id_analysis["match"] == 1
    assert file_analysis["seats"] == id_analysis["seats"]
    table = _ok(run_arena(["replays", "analyse", "game.jsonl", "--min-loss", "99"], played))
    # nothing lost 99 points: said in one line, not an empty table titled "every decision"
    assert "game.jsonl: no decision lost 99 points or more" in " ".join(table.stdout.split())
    assert "every decision" not in table.stdout


def test_wrong_targets_say_what_was_wrong_and_what_to_do(played: Path) -> None:
    missing = run_arena(["replays", "show", "nosuch.jsonl"], played)
    assert missing.returncode == 2
    assert "'nosuch.jsonl' is neither a match id nor a readable file" in missing.stderr
    assert "arena replays list" in missing.stderr and "Traceback" not in missing.stderr

    export = run_arena(["replays", "export", "game.jsonl"], played)
    assert export.returncode == 2 and "'game.jsonl' is not a match id" in export.stderr
    assert "arena replays show FILE" in export.stderr

    for args in (["engine", "verify", "binary.jsonl"], ["engine", "show", "binary.jsonl"],
                 ["replays", "verify", "binary.jsonl"], ["replays", "show", "binary.jsonl"],
                 ["replays", "analyse", "binary.jsonl"]):  # fmt: skip
        run = run_arena(args, played)
        assert run.returncode == 1, (args, run)  # bad data, the same for every command
        assert "not UTF-8" in run.stdout + run.stderr, (args, run)


def test_a_damaged_stored_replay_names_what_to_do(played: Path, tmp_path: Path) -> None:
    home = tmp_path / "damaged"
    home.mkdir()
    copy = run_arena(["db", "backup", str(home / "arena.db")], played)
    assert copy.returncode == 0, copy.stderr
    with sqlite3.connect(home / "arena.db") as con:
        con.execute("UPDATE replay SET data = ? WHERE match_id = 1", (b"not zlib at all",))
    for args in (["replays", "show", "1"], ["replays", "analyse", "1"], ["replays", "export", "1"],
                 ["replays", "export", "1", "--format", "html"]):  # fmt: skip
        run = run_arena(args, home)
        assert run.returncode == 1, (args, run)
        assert "the replay of match 1 is corrupt" in run.stderr, (args, run.stderr)
        assert "'arena db check'" in run.stderr and "restore a backup" in run.stderr, (args, run.stderr)


def test_verify_takes_several_and_answers_in_the_order_given(played: Path) -> None:
    both = run_arena(["replays", "verify", "1", "game.jsonl", "1"], played)
    assert both.returncode == 0, both.stdout + both.stderr
    lines = [line for line in both.stdout.splitlines() if line.startswith("OK ")]
    assert [" ".join(line.split(":")[0].split()) for line in lines] == [
        "OK match 1",
        "OK game.jsonl",
        "OK match 1",
    ], lines

    engine = run_arena(["engine", "verify", "game.jsonl", "binary.jsonl", "game.jsonl"], played)
    assert engine.returncode == 1  # the worst: a record that is bad data
    assert engine.stdout.count("OK game.jsonl:") == 2
    assert "binary.jsonl is not UTF-8 text" in engine.stderr
    missing = run_arena(["engine", "verify", "game.jsonl", "nosuch.jsonl"], played)
    assert missing.returncode == 2 and "OK game.jsonl:" in missing.stdout and "nosuch.jsonl" in missing.stderr


@pytest.mark.parametrize("value", ["abc", None, [1], {"a": 1}, True, 10**400])
def test_hand_edited_extras_are_ignored_not_a_traceback(played: Path, tmp_path: Path, value: object) -> None:
    """The referee's extras (``ms`` of a decision, ``at_event`` of a forfeit) are not part of the
    engine's check, so an edited file replays; 'show' then died on ``float("abc")`` and the
    viewer on ``int(None)`` (ValueError/TypeError tracebacks).  What is not a number is not shown
    (``ms``) or shows the forfeit from the start (``at_event``)."""
    from arena.cli.replays_cmd import Navigator, _names
    from arena.engine import replay

    lines = (played / "game.jsonl").read_text(encoding="utf-8").splitlines()
    decision = next(k for k, line in enumerate(lines) if '"action"' in line)
    event = json.loads(lines[decision])
    event["ms"] = value
    lines[decision] = json.dumps(event)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = _ok(run_arena(["replays", "show", str(edited)], played))
    assert f"#{decision} seat " in run.stdout and "Traceback" not in run.stderr

    rep = replay("\n".join(lines))
    at_event = None if type(value) is int else value  # a huge int is a (late) event number
    rep.result.update(forfeits=[{"seat": 1, "reason": "crashed", "at_event": at_event}])  # as if recorded
    nav = Navigator(rep)
    for step in range(nav.last + 1):
        nav.step = step
        shown = nav.screen(_names(rep), "edited").plain
        assert "seat 1 forfeited" in shown


def test_a_page_number_past_what_sqlite_holds_is_past_the_end(played: Path) -> None:
    """'replays list --page 99999999999999999999' was an OverflowError traceback (the offset did
    not fit SQLite's 64-bit integer); it is past the last page like any other."""
    for page in ("99999999999999999999", "1000000000000000000"):
        run = run_arena(["replays", "list", "--page", page], played)
        assert run.returncode == 0, run.stderr
        assert f"page {page} is past the last one: the one match makes page 1 at 20 a page" in run.stderr
        assert "Traceback" not in run.stderr


def test_a_tournament_id_past_what_sqlite_holds_selects_nothing(played: Path) -> None:
    """'replays list/verify --all --tournament 99999999999999999999' was an OverflowError
    traceback; like any tournament that does not exist, it selects no match."""
    listed = run_arena(["replays", "list", "--tournament", "99999999999999999999"], played)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert "no finished matches that match these filters" in listed.stderr
    checked = run_arena(["replays", "verify", "--all", "--tournament", "99999999999999999999"], played)
    assert checked.returncode == 0 and "Traceback" not in checked.stderr, checked.stderr
    assert "verified 0 replays" in checked.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["engine", "verify", "/dev/zero"],
        ["engine", "show", "/dev/zero"],
        ["replays", "show", "/dev/zero"],
        ["replays", "analyse", "/dev/zero"],
    ],
)
def test_an_endless_file_is_refused_not_read_until_memory_runs_out(played: Path, args: list[str]) -> None:
    run = run_arena(args, played, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "/dev/zero holds more than 64 MiB" in run.stderr and "not one" in run.stderr
    assert "Traceback" not in run.stderr


def test_replays_verify_names_a_device_as_not_a_regular_file(played: Path) -> None:
    run = run_arena(["replays", "verify", "/dev/zero"], played, timeout=60)
    assert run.returncode == 2
    assert "cannot read /dev/zero: not a regular file" in run.stderr
