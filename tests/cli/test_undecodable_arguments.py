"""An argument that is not UTF-8 text (bytes a shell passes on as they are) is one line and exit
2 before anything runs: ``arena bots show $'a\\xffb'`` ended in "'utf-8' codec can't encode
character '\\udcff'", and ``arena bots add`` of such a file name in an OSError (an outside
review of the PostgreSQL paths; the same on SQLite)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .helpers import ARENA, ROOT, arena_env

RANDOM = ROOT / "bots" / "random_bot.py"


def _run(home: Path, *args: bytes) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [os.fsencode(ARENA), *args], cwd=home, env=arena_env(home), capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args",
    [
        (b"bots", b"show", b"a\xffb"),
        (b"replays", b"list", b"--bot", b"a\xffb"),
        (b"tournament", b"create", b"random", b"greedy", b"--name", b"t\xfe"),
    ],
)
def test_an_argument_that_is_not_utf8_is_refused_in_one_line(tmp_path: Path, args: tuple[bytes, ...]) -> None:
    run = _run(tmp_path, *args)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not UTF-8 text" in lines[0], run.stderr
    assert "\\x" in lines[0], lines  # the byte is shown, escaped
    assert not (tmp_path / "arena.db").exists()  # nothing ran


def test_a_bot_file_whose_name_is_not_utf8_is_refused_and_a_utf8_one_is_added(tmp_path: Path) -> None:
    odd = tmp_path / os.fsdecode(b"b\xe9t.py")
    odd.write_bytes(RANDOM.read_bytes())
    run = _run(tmp_path, b"bots", b"add", b"mine", os.fsencode(odd), b"--no-check")
    assert run.returncode == 2 and "argument 4" in run.stderr and "rename the file" in run.stderr, run.stderr
    good = tmp_path / "bét.py"
    odd.rename(good)
    run = _run(tmp_path, b"bots", b"add", b"mine", os.fsencode(good), b"--no-check")
    assert run.returncode == 0, run.stderr
