"""Output paths of ``arena match``, ``arena engine play`` and ``arena replays export``: missing
folders are created, a path that cannot be written is refused with one line (exit 2) before
anything is played, stored or read, and a write that fails after the game (a full disk:
``/dev/full``) still shows the result, says where the replay is kept, and exits 1 -- never a
traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.cli.common import DEFAULT_LOGS_ADVICE

from .helpers import run_arena

MATCH = ["match", "greedy", "random", "--seed", "5", "--unlimited", "--quiet"]
FULL = Path("/dev/full")  # every write fails with ENOSPC: a full disk


def _refused(stderr: str, path: str, reason: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert lines == [f"error: cannot write {path}: {reason}; give another path"], stderr


@pytest.mark.parametrize(
    ("option", "path", "reason"),
    [
        ("--out", "afile/g.jsonl", "afile is a file, not a folder"),
        ("--out", "afile/deeper/g.jsonl", "afile is a file, not a folder"),
        ("--out", "adir", "it is a folder, not a file"),
        ("--logs", "afile", "afile is a file, not a folder"),
        ("--logs", "afile/logs", "afile is a file, not a folder"),
    ],
)
def test_match_refuses_an_unwritable_path_before_playing(
    home: Path, option: str, path: str, reason: str
) -> None:
    (home / "afile").write_text("keep me\n")
    (home / "adir").mkdir()
    run = run_arena([*MATCH, option, path], home)
    assert run.returncode == 2, run.stderr
    _refused(run.stderr, path, reason)
    assert "vs" not in run.stderr and run.stdout == ""  # nothing played
    assert (home / "afile").read_text() == "keep me\n"  # nothing lost
    assert list((home / "adir").iterdir()) == []
    again = run_arena(MATCH, home)  # nothing was stored either: the next match is match 1
    assert again.returncode == 0, again.stderr
    assert "stored as match 1 " in again.stderr


def test_match_names_what_to_change_when_the_default_logs_folder_is_unusable(home: Path) -> None:
    """The default logs folder lies under ARENA_HOME (a read-only data folder, or a file where it
    should be): the user gave no path, so "give another path" told them nothing; the error names
    --logs and ARENA_HOME."""
    (home / "logs").write_text("keep me\n")
    run = run_arena(MATCH, home)
    assert run.returncode == 2, run.stderr
    logs = home / "logs" / "matches"
    expected = (
        f"error: cannot write {logs}: {home / 'logs'} is a file, not a folder; it is the logs folder under "
        f"ARENA_HOME: give another with --logs DIR, or another ARENA_HOME"
    )
    assert run.stderr.strip().splitlines() == [expected], run.stderr
    assert (home / "logs").read_text() == "keep me\n"


@pytest.mark.parametrize("home_as", ["file-at-logs", "under-proc"])
def test_evaluate_names_what_to_change_when_the_default_logs_folder_is_unusable(
    home: Path, home_as: str
) -> None:
    """``arena evaluate`` made its default logs folder only once the bots were starting: an
    unusable ARENA_HOME was a traceback (``ARENA_HOME=/proc/x``).  It is refused first, with the
    same advice as ``arena match``, and nothing is started."""
    if home_as == "file-at-logs":
        (home / "logs").write_text("keep me\n")
        data, reason = home, f"{home / 'logs'} is a file, not a folder"
    else:
        data, reason = Path("/proc/arena-no-such-home"), "No such file or directory"  # cannot be made
    run = run_arena(["evaluate", "random", "--vs", "random", "--games", "2"], home, ARENA_HOME=str(data))
    assert run.returncode == 2, run.stderr
    expected = f"error: cannot write {data / 'logs' / 'evaluate'}: {reason}; {DEFAULT_LOGS_ADVICE}"
    assert run.stderr.strip().splitlines() == [expected], run.stderr
    assert run.stdout == ""


def test_match_creates_missing_folders_of_out(home: Path) -> None:
    run = run_arena([*MATCH, "--out", "new/sub/g.jsonl"], home)
    assert run.returncode == 0, run.stderr
    assert "replay: new/sub/g.jsonl" in run.stderr
    assert (home / "new" / "sub" / "g.jsonl").read_text().startswith('{"game"')


def test_match_whose_replay_cannot_be_written_still_shows_the_result(home: Path) -> None:
    run = run_arena([*MATCH, "--out", str(FULL)], home)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert "place" in run.stdout and "greedy" in run.stdout  # the result table
    assert "stored as match 1 ('arena replays show 1')" in run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error")]
    assert errors == [f"error: cannot write {FULL}: No space left on device; the replay is stored as match 1"]
    exported = run_arena(["replays", "export", "1"], home)
    assert exported.returncode == 0 and exported.stdout.startswith('{"game"'), exported.stderr


def test_match_without_database_keeps_the_replay_in_the_logs_when_out_fails(home: Path) -> None:
    run = run_arena([*MATCH, "--no-record", "--out", str(FULL), "--logs", "logs"], home)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert "place" in run.stdout
    kept = list((home / "logs").glob("*.jsonl"))
    assert len(kept) == 1 and kept[0].read_text().startswith('{"game"')
    assert f"replay: {kept[0]}" in run.stderr or f"replay: logs/{kept[0].name}" in run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith(f"error: cannot write {FULL}: No space left on device;")
    assert errors[0].endswith(f"{kept[0].name} instead")


def test_engine_play_creates_missing_folders(home: Path) -> None:
    run = run_arena(["engine", "play", "--players", "2", "--out", "nodir/g.jsonl"], home)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == "wrote nodir/g.jsonl"
    assert (home / "nodir" / "g.jsonl").read_text().startswith('{"game"')


@pytest.mark.parametrize(
    ("path", "reason"),
    [("afile/g.jsonl", "afile is a file, not a folder"), (".", "it is a folder, not a file")],
)
def test_engine_play_refuses_an_unwritable_path(home: Path, path: str, reason: str) -> None:
    (home / "afile").write_text("keep me\n")
    run = run_arena(["engine", "play", "--players", "2", "--show", "--out", path], home)
    assert run.returncode == 2, run.stderr
    _refused(run.stderr, path, reason)  # (--show printed nothing: no game was played)
    assert run.stdout == ""
    assert (home / "afile").read_text() == "keep me\n"


def test_engine_play_refuses_a_folder_without_permission(home: Path) -> None:
    if os.geteuid() != 0:
        locked = home / "locked"
        locked.mkdir(mode=0o500)
        target = "locked/g.jsonl"
    else:  # root may write in any folder, but sysfs refuses new files even to root
        target = "/sys/kernel/g.jsonl"
    run = run_arena(["engine", "play", "--out", target], home)
    if os.geteuid() != 0:
        (home / "locked").chmod(0o700)
    assert run.returncode == 2, run.stderr
    _refused(run.stderr, target, "Permission denied")


def test_engine_play_record_goes_to_stdout_when_out_fails(home: Path) -> None:
    run = run_arena(["engine", "play", "--players", "2", "--out", str(FULL)], home)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith('{"game"') and run.stdout.endswith("\n")  # the record is not lost
    assert run.stderr.strip().splitlines() == [
        f"error: cannot write {FULL}: No space left on device; the record went to standard output instead"
    ]


def test_replays_export_creates_missing_folders_and_refuses_an_unwritable_path(home: Path) -> None:
    played = run_arena(MATCH, home)
    assert played.returncode == 0, played.stderr
    made = run_arena(["replays", "export", "1", "--out", "new/sub/r.jsonl"], home)
    assert made.returncode == 0, made.stderr
    assert (home / "new" / "sub" / "r.jsonl").read_text().startswith('{"game"')
    (home / "afile").write_text("keep me\n")
    (home / "adir").mkdir()
    for path, reason in (
        ("afile/r.html", "afile is a file, not a folder"),
        ("afile/deeper/r.jsonl", "afile is a file, not a folder"),
        ("adir", "it is a folder, not a file"),
    ):
        run = run_arena(["replays", "export", "1", "--out", path], home)
        assert run.returncode == 2, run.stderr
        _refused(run.stderr, path, reason)
        assert run.stdout == ""
    assert (home / "afile").read_text() == "keep me\n"
    assert list((home / "adir").iterdir()) == []
    full = run_arena(["replays", "export", "1", "--out", str(FULL)], home)  # fails while writing: exit 1
    assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
    assert full.stderr.strip().splitlines() == [f"error: cannot write {FULL}: No space left on device"]
    unknown = run_arena(["replays", "export", "99", "--out", "for99/r.html"], home)
    assert unknown.returncode == 1 and "no match 99" in unknown.stderr, unknown.stderr
    assert not (home / "for99").exists()  # nothing made for a match that is not there
