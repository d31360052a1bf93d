"""Text a bot controls, made safe to store and to print.

A bot's stderr, the bytes it sends and the names it gives end up in forfeit details, logs, the
terminal of whoever runs ``arena`` and the database.  Raw, they could carry a NUL (which
PostgreSQL's text type refuses: the result of a whole match could then not be stored) or a
terminal escape sequence (clearing the screen, rewriting the line that says who forfeited,
setting the window title or the clipboard).  :func:`printable` writes every such character as a
visible escape instead, so the text keeps what it says and loses what it could do.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (ESC and CSI among them), lone surrogates
# (not encodable as UTF-8), the line/paragraph separators some terminals and viewers obey, the
# bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E-200F, U+202A-202E,
# U+2066-206F) that make a line read differently from what it stores, the invisible characters
# that carry no glyph of their own (zero-width space U+200B, word joiner and invisible operators
# U+2060-2064, U+180E, U+FEFF, the interlinear annotation marks U+FFF9-FFFB) and the tag
# characters (U+E0000 block) that hide text from a reader.  Kept as they are: the joiners
# U+200C/U+200D (Persian words, emoji sequences), the soft hyphen and the format characters of
# particular scripts.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029"
    "\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0001\U000e0020-\U000e007f]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every control character except tab and newline (NUL, ESC, DEL, C1, a lone
    surrogate, U+2028/U+2029), every bidirectional control (an override, an isolate) and every
    invisible character that hides text (a zero-width space, a tag character) written as a
    visible escape (``\\x00``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``).
    Safe to print on a terminal and to store in any database's text column; text without such
    characters is returned unchanged (the same object)."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


_DIGITS = re.compile(r"[0-9]{1,18}")


def small_int(text: str) -> int | None:
    """The number ``text`` spells in 1 to 18 ASCII digits (so it fits a 64-bit database integer),
    else None.  Unlike ``str.isdigit`` this refuses other scripts' digits and superscripts ("²",
    "٣"), which ``int`` refuses or reads differently, and lengths ``int`` refuses (over 4,300
    digits) or a database cannot store; surrounding white space is not allowed either."""
    return int(text) if _DIGITS.fullmatch(text) else None


_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+")


def shell_word(text: str) -> str:
    """``text`` as one word of a shell command to copy and paste: as it is when it needs no
    quoting, else in double quotes with ``"``, ``\\``, ``$`` and backquotes escaped (a command
    shown inside single quotes, as the arena's hints are, stays readable).

    >>> shell_word("bots/greedy_bot.py"), shell_word("/tmp/data dir ü/x.py"), shell_word('a"$b')
    ('bots/greedy_bot.py', '"/tmp/data dir ü/x.py"', '"a\\\\"\\\\$b"')
    """
    if text and _SHELL_SAFE.fullmatch(text) and text.isascii():
        return text
    return '"' + re.sub(r'(["\\\\$`])', r"\\\1", text) + '"'
