"""A bot file with a long name (legal on disk: up to 255 bytes) is stored and played: ``arena bots
add`` of a 250-character name ended in "File name too long" (its temporary copy's name added 38
characters), an escaped control character made the stored name four times longer, and ``arena
match`` of such a file failed opening the bot's log (an outside review)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from arena.store.bots import MAX_STORED_NAME, stored_filename

ROOT = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).with_name("arena")


@given(st.text(min_size=1, max_size=255).filter(lambda t: "/" not in t and len(t.encode()) <= 255))
def test_a_stored_name_is_printable_short_and_keeps_a_short_suffix(name: str) -> None:
    stored = stored_filename(name)
    assert 0 < len(stored.encode()) <= MAX_STORED_NAME or stored == ""
    assert not any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in stored)
    suffix = name.rpartition(".")[2]
    if "." in name and suffix.isascii() and suffix.isalnum() and len(suffix) <= 8:
        assert stored.endswith("." + suffix)


def test_a_short_name_is_kept_and_a_long_one_cut_before_its_suffix() -> None:
    assert stored_filename("mybot.py") == "mybot.py"
    long = "b" * 250 + ".py"
    assert stored_filename(long) == "b" * (MAX_STORED_NAME - 3) + ".py"
    assert stored_filename("é" * 120 + ".js") == "é" * 98 + ".js"  # cut on a character boundary


def _arena(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "ARENA_HOME": str(home), "HOME": str(home), "ARENA_SANDBOX": "off"}
    return subprocess.run([str(ARENA), *args], cwd=home, env=env, capture_output=True, text=True, timeout=180)


def test_a_bot_file_with_a_long_name_is_added_and_played(tmp_path: Path) -> None:
    long = tmp_path / ("b" * 240 + "\x01" * 8 + ".py")
    long.write_bytes((ROOT / "bots" / "random_bot.py").read_bytes())
    added = _arena(tmp_path, "bots", "add", "longname", str(long), "--no-check")
    assert added.returncode == 0, added.stderr
    played = _arena(tmp_path, "match", str(long), "random", "--seed", "3")
    assert played.returncode == 0, played.stderr
    logs = sorted(p.name for p in (tmp_path / "logs" / "matches").iterdir())
    assert any(name.startswith(("m1-seat0-file_bbbb", "m1-seat0-bbbb")) for name in logs), logs
    assert all(len(name.encode()) <= 255 for name in logs)
