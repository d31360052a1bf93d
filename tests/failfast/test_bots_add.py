"""``arena bots add`` checks a bot before registering it (real check matches, sandboxed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.sandbox import bwrap_problem
from arena.store.bots import list_bots
from arena.store.db import Database

from .helpers import REPO, SYNTAX_ERROR, arena, cli, write_bot

GREEDY = REPO / "bots" / "greedy_bot.py"


def _nothing_stored(home: Path) -> None:
    artifacts = home / "artifacts"
    assert not artifacts.exists() or not any(p.is_file() for p in artifacts.rglob("*"))
    if (home / "arena.db").exists():
        db = Database()
        try:
            assert list_bots(db, include_removed=True) == []
        finally:
            db.close()


@pytest.fixture
def sandboxed() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")


def test_empty_file_directory_and_oversized_file_are_refused(home: Path, tmp_path: Path) -> None:
    empty = write_bot(tmp_path, "empty.py", "")
    run = cli("bots", "add", "e", str(empty), home=home, code=1)
    assert f"error: {empty} is empty: a bot is a script or an executable" in run.stderr
    folder = tmp_path / "mybot"
    folder.mkdir()
    run = cli("bots", "add", "d", str(folder), home=home, code=2)  # the argument names a folder: usage
    assert f"error: {folder} is a directory: give the path of the bot's script or executable" in run.stderr
    big = tmp_path / "big.py"
    with big.open("wb") as fh:  # 200 MB (sparse: no disk used)
        fh.truncate(200 * 1_000_000)
    run = cli("bots", "add", "b", str(big), home=home, code=1)
    assert "big.py is 200.0 MB, over the 50 MB limit for a bot file" in run.stderr
    assert "--max-size" in run.stderr and "ARENA_MAX_BOT_MB" in run.stderr
    _nothing_stored(home)


def test_a_missing_file_is_a_usage_error_naming_the_path(home: Path, tmp_path: Path) -> None:
    """As in 'arena match': exit 2, the path as given and where it was looked for (once: an
    absolute path was repeated in brackets)."""
    missing = tmp_path / "sub" / "nope.py"
    run = cli("bots", "add", "x", str(missing), home=home, code=2)
    assert f"error: {missing}: no such file; give" in run.stderr
    assert "give the path of the bot's script or executable" in run.stderr
    relative = Path("no-such-dir") / "nope.py"  # read from the current folder: where that is
    run = cli("bots", "add", "x", str(relative), home=home, code=2)
    assert f"error: {relative}: no such file ({relative.resolve()}); give" in run.stderr
    _nothing_stored(home)


def test_the_size_limit_is_configurable(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bot = write_bot(tmp_path, "mine.py", GREEDY.read_text(encoding="utf-8"))
    size = bot.stat().st_size
    run = cli("bots", "add", "mine", str(bot), "--max-size", f"{size / 2e6}", "--no-check", home=home, code=1)
    assert "over the" in run.stderr and "limit for a bot file" in run.stderr
    monkeypatch.setenv("ARENA_MAX_BOT_MB", f"{size / 2e6}")
    run = cli("bots", "add", "mine", str(bot), "--no-check", home=home, code=1)
    assert "limit for a bot file" in run.stderr
    monkeypatch.setenv("ARENA_MAX_BOT_MB", "lots")
    run = cli("bots", "add", "mine", str(bot), "--no-check", home=home, code=1)
    assert "ARENA_MAX_BOT_MB='lots' is not a number of megabytes" in run.stderr
    _nothing_stored(home)
    run = cli("bots", "add", "mine", str(bot), "--no-check", "--max-size", f"{size * 2 / 1e6}", home=home)
    assert "added mine version 1" in run.stdout


def test_broken_bots_fail_their_check_and_are_not_stored(home: Path, tmp_path: Path, sandboxed: None) -> None:
    bad = write_bot(tmp_path, "bad.py", SYNTAX_ERROR)
    run = arena("bots", "add", "bad", str(bad), home=home, cwd=tmp_path)  # the real console script
    assert run.code == 1, run.stderr
    assert "checking bad: a match against random (sandboxed" in run.stderr
    assert (
        "error: bad was not registered: it forfeited its check match against random: crashed: the process "
        "exited with status 1 before connecting: SyntaxError:"
    ) in run.stderr
    assert f'|   File "{bad}", line 1' in run.stderr  # its stderr tail, naming the user's file
    assert "--no-check" in run.stderr and "Traceback" not in run.stderr.split("|")[0]
    noise = tmp_path / "noise.py"
    noise.write_bytes(os.urandom(4096).replace(b"\n", b"\x00"))
    run = cli("bots", "add", "noise", str(noise), home=home, code=1)
    assert "noise was not registered: it forfeited its check match against random: crashed" in run.stderr
    blob = tmp_path / "blob"
    blob.write_bytes(b"\x7fELF" + os.urandom(4092))
    blob.chmod(0o755)
    run = cli("bots", "add", "blob", str(blob), home=home, code=1)
    assert "blob was not registered: it forfeited its check match" in run.stderr
    _nothing_stored(home)
    # --no-check registers it anyway (the user's call)
    run = cli("bots", "add", "bad", str(bad), "--no-check", home=home)
    assert "added bad version 1" in run.stdout and "checking" not in run.stderr


def test_a_working_bot_passes_its_check(home: Path, tmp_path: Path, sandboxed: None) -> None:
    run = cli("bots", "add", "mine", str(GREEDY), home=home)
    assert "check passed: 20 decisions without a fault" in run.stderr
    assert "added mine version 1" in run.stdout
    again = cli("bots", "add", "mine", str(GREEDY), home=home)  # identical: no check, nothing added
    assert "checking" not in again.stderr and "is this file already" in again.stdout


def test_a_sample_name_takes_only_the_sample_file(home: Path, tmp_path: Path) -> None:
    """Another file under ``greedy`` would silently stand in for the sample wherever the name is
    used: refused, nothing stored; the sample's own file may be registered under its name."""
    mine = tmp_path / "my_bot.py"
    mine.write_bytes(REPO.joinpath("bots", "random_bot.py").read_bytes())
    run = cli("bots", "add", "greedy", str(mine), "--no-check", home=home, code=1)
    assert "error: the name 'greedy' is reserved for the sample bot greedy_bot.py: register your bot" in (
        run.stderr
    ), run.stderr
    _nothing_stored(home)
    cli("bots", "add", "greedy", str(GREEDY), "--no-check", home=home)
    cli("bots", "add", "my-greedy", str(mine), "--no-check", home=home)


def test_re_adding_a_removed_bot_whose_stored_file_is_gone_restores_it_and_brings_it_back(
    home: Path, tmp_path: Path
) -> None:
    """'arena bots remove' says adding the file again brings the bot back: so it does when the
    stored file is missing too (the file was restored, and the bot stayed removed)."""
    mine = tmp_path / "mine.py"
    mine.write_bytes(REPO.joinpath("bots", "random_bot.py").read_bytes())
    cli("bots", "add", "mine", str(mine), "--no-check", home=home)
    cli("bots", "remove", "mine", home=home)
    for stored in (home / "artifacts").rglob("mine.py"):
        stored.unlink()
    run = cli("bots", "add", "mine", str(mine), "--no-check", home=home)
    assert "restored the stored file of mine version 1" in run.stdout, run
    db = Database()
    try:
        assert [b.bot.name for b in list_bots(db)] == ["mine"]  # active again
    finally:
        db.close()
