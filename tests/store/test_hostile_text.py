"""Text a bot controls is stored and printed safely: a NUL on its stderr (PostgreSQL's text type
refuses NUL: the match's result could not be stored, a tournament with that bot could never
finish) and terminal escape sequences (which could clear the operator's screen or rewrite the
forfeit line) reach the database and the terminal as visible escapes (arena/safetext.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlmodel import select

from arena.safetext import printable
from arena.store.db import Database
from arena.store.models import MatchSeat

from .helpers import run_cli

HOSTILE = (
    "import os, sys\n"
    "os.write(2, b'RuntimeError: bad\\x00byte \\x1b[2J\\x1b]0;pwned\\x07 \\x1b[1A\\x1b[2K done\\n')\n"
    "os._exit(1)\n"
)


def test_a_nul_and_escapes_on_stderr_are_stored_and_printed_escaped(db_url: str, arena_home: Path) -> None:
    bot = arena_home / "hostile_bot.py"
    bot.write_text(HOSTILE)
    bot.chmod(0o755)
    run = run_cli(
        arena_home, db_url, "match", str(bot), "random", "--seed", "1", "--no-sandbox", code=3
    )  # 3: a bot could not play
    said = run.stdout + run.stderr
    assert "\x00" not in said and "\x1b" not in said and "\x07" not in said, repr(said)
    assert "RuntimeError: bad\\x00byte \\x1b[2J\\x1b]0;pwned\\x07" in said, said
    db = Database(db_url)
    try:
        with db.session() as session:
            seats = session.exec(select(MatchSeat).where(MatchSeat.termination == "crashed")).all()
            (detail,) = [s.detail for s in seats]
    finally:
        db.close()
    assert detail is not None and "RuntimeError: bad\\x00byte" in detail and "\x00" not in detail
    listed = run_cli(arena_home, db_url, "replays", "list").stdout
    assert "finished" in listed  # the match was stored as finished, not left running


@given(st.text())
def test_printable_leaves_no_control_character_and_keeps_plain_text(text: str) -> None:
    out = printable(text)
    assert all(c in "\t\n" or not (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) for c in out)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in out)
    out.encode("utf-8")  # always encodable (a lone surrogate is not)
    if all(c in "\t\n" or (0x20 <= ord(c) < 0x7F) for c in text):
        assert out == text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [("a\x00b", "a\\x00b"), ("\x1b[2J", "\\x1b[2J"), ("tab\tnew\nline", "tab\tnew\nline"), ("\x9b", "\\x9b"),
     ("é ✓", "é ✓"), ("\u2028", "\\u2028"),
     # a right-to-left override makes "exe.txt" read "txt.exe"; zero-width and tag characters hide text
     ("ValueError: boom\u202etxt.exe", "ValueError: boom\\u202etxt.exe"), ("a\u200bb", "a\\u200bb"),
     ("\U000e0041", "\\U000e0041"), ("\u2066x\u2069", "\\u2066x\\u2069")],
)  # fmt: skip
def test_printable_examples(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_printable_escapes_what_hides_or_reorders_text_and_keeps_joined_scripts() -> None:
    """Bidirectional controls and invisible characters are escaped (they make a line read
    differently from what it stores); the joiners of emoji sequences and of Persian words, the
    soft hyphen and scripts' own format characters are text and stay as they are (an outside
    review: the first version escaped every Unicode format character, so a bot file named with a
    family emoji became another bot's name)."""
    import unicodedata

    hidden = [0x061C, 0x180E, 0x200B, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2060, 0x2065)]
    hidden += [*range(0x2066, 0x2070), 0xFEFF, 0xFFF9, 0xFFFA, 0xFFFB, 0xE0001, *range(0xE0020, 0xE0080)]
    for code in hidden:
        assert printable(chr(code)) != chr(code), f"U+{code:04X} is shown raw"
    for text in ("👨\u200d👩\u200d👧", "می\u200cخواهم", "x\u00ady", "\u0600\u0661"):
        assert printable(text) is text, text
    for code in range(0x110000):  # nothing that is a letter, mark, number, punctuation or symbol
        if unicodedata.category(chr(code))[0] in "LMNPS":
            assert printable(chr(code)) == chr(code), f"U+{code:04X} is escaped"
