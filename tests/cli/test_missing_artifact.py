"""A registered bot whose stored file is gone (``artifacts/`` cleaned, or the database restored
from 'arena db backup' alone) is refused with what to do before anything is played: it used to
play, every game a 'crashed ... can't open file' forfeit, rated and counted (an outside review).
Adding the same file again puts it back."""

from __future__ import annotations

import shutil
from pathlib import Path

from .helpers import ROOT, run_arena


def test_a_missing_stored_file_is_refused_and_restored_by_adding_it_again(home: Path) -> None:
    bot = home / "mybot.py"
    shutil.copyfile(ROOT / "bots" / "random_bot.py", bot)
    assert run_arena(["bots", "add", "mybot", str(bot), "--no-check"], home).returncode == 0
    created = run_arena(["tournament", "create", "mybot", "random", "--games", "1"], home)
    assert created.returncode == 0, created.stderr
    tid = created.stdout.strip()
    shutil.rmtree(home / "artifacts")

    said = "the stored file of mybot (version 1) is missing"
    match = run_arena(["match", "mybot", "random", "--quiet", "--no-sandbox"], home)
    assert match.returncode != 0 and said in " ".join(match.stderr.split()), match.stderr
    assert "arena bots add mybot FILE" in " ".join(match.stderr.split())
    start = run_arena(["tournament", "start", tid, "--no-pin"], home)
    assert start.returncode == 1 and said in " ".join(start.stderr.split()), start.stderr
    shown = run_arena(["tournament", "show", tid], home)
    assert "crashed" not in shown.stdout and "forfeit" not in shown.stdout.lower(), shown.stdout

    again = run_arena(["bots", "add", "mybot", str(bot), "--no-check"], home)
    assert again.returncode == 0 and "restored the stored file of mybot version 1" in again.stdout, again
    played = run_arena(["match", "mybot", "random", "--quiet", "--no-sandbox"], home)
    assert played.returncode == 0, played.stderr  # random, a sample, was put back from bots/ by itself


def test_a_damaged_stored_file_is_refused_and_repaired_by_adding_it_again(home: Path) -> None:
    """The stored file is there but not the registered bytes (emptied, overwritten): refused with
    what to do, like a missing one (it used to play, every game a forfeit, and 'bots add' of the
    same file said 'identical, nothing added' and left the damage); a sample's is put back."""
    bot = home / "mybot.py"
    shutil.copyfile(ROOT / "bots" / "random_bot.py", bot)
    assert run_arena(["bots", "add", "mybot", str(bot), "--no-check"], home).returncode == 0
    assert run_arena(["bots", "add", "greedy", str(ROOT / "bots" / "greedy_bot.py")], home).returncode == 0
    for stored in (home / "artifacts").glob("*/*.py"):
        stored.write_text("")  # damaged in place: both the registered bot's and the sample's

    match = run_arena(["match", "mybot", "greedy", "--quiet", "--no-sandbox"], home)
    said = " ".join(match.stderr.split())
    assert match.returncode != 0 and "the stored file of mybot (version 1) is damaged" in said, match.stderr
    assert "arena bots add mybot FILE" in said
    again = run_arena(["bots", "add", "mybot", str(bot), "--no-check"], home)
    assert again.returncode == 0 and "restored the stored file of mybot version 1" in again.stdout, again
    played = run_arena(["match", "mybot", "greedy", "--quiet", "--no-sandbox"], home)
    assert played.returncode == 0, played.stderr  # greedy, a sample, was put back by itself
    assert "forfeit" not in played.stdout.lower(), played.stdout
