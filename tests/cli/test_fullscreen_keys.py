"""The full-screen viewers split what the terminal sends into keys: several keys in one read
(a held arrow key, a paste) are each a key, escape sequences whole, and a key cut short at the
end of a read is kept for the next (``arena.cli.fullscreen.split_keys``)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.cli.fullscreen import KeyReader, split_keys
from arena.cli.replays_cmd import KEYS

RIGHT, LEFT, HOME, END = "\x1b[C", "\x1b[D", "\x1b[1~", "\x1b[4~"


@pytest.mark.parametrize(
    "data,keys,rest",
    [
        (b"\x1b[C\x1b[C\x1b[C", [RIGHT] * 3, b""),
        (b"l\x1b[Dq", ["l", LEFT, "q"], b""),
        (b"\x1b[1~\x1b[4~", [HOME, END], b""),
        (b"\x1bOH", ["\x1bOH"], b""),
        (b"\x1b[C\x1b[", [RIGHT], b"\x1b["),  # the second arrow still arriving
        (b"\x1b", [], b"\x1b"),  # a lone Esc, or the start of a sequence: wait for more
        (b"\x1bq", ["\x1b", "q"], b""),
        ("ä?".encode(), ["ä", "?"], b""),
        ("ä".encode()[:1], [], "ä".encode()[:1]),
        (b"\x1b[1;5C", ["\x1b[1;5C"], b""),  # Ctrl+Right: parameters, then the final byte
    ],
)
def test_split_keys(data: bytes, keys: list[str], rest: bytes) -> None:
    assert split_keys(data) == (keys, rest)


@given(
    st.lists(st.sampled_from([k for k in KEYS if k != "\x1b"] + ["x", "ü", "\x1b[5~"]), max_size=30),
    st.data(),
)
def test_keys_survive_any_cut(sent: list[str], data: st.DataObject) -> None:
    """Whatever the keys and wherever the reads cut the bytes, the keys come out as sent."""
    stream = "".join(sent).encode()
    cut = data.draw(st.integers(0, len(stream)))
    first, rest = split_keys(stream[:cut])
    second, left = split_keys(rest + stream[cut:])
    assert first + second == sent and left == b""


def test_the_reader_waits_for_a_key_cut_short_and_takes_a_lone_escape() -> None:
    r, w = os.pipe()
    try:
        reader = KeyReader(r)
        os.write(w, b"\x1b[C\x1b[C\x1b")
        assert reader.read() == [RIGHT, RIGHT, "\x1b"]  # nothing followed the Esc: a key
        os.write(w, b"h\xc3")
        os.write(w, b"\xa4")
        assert reader.read() == ["h", "ä"]
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize(
    "data,keys,rest",
    [
        (b"\xc3q", ["\ufffd", "q"], b""),  # a lead byte without its continuation: q is still a key
        (b"\xe9q", ["\ufffd", "q"], b""),  # Latin-1 'e-acute' from a terminal not in UTF-8
        (b"\xf0\x1b[C", ["\ufffd", RIGHT], b""),  # the arrow is not swallowed
        (b"\xffab", ["\ufffd", "a", "b"], b""),  # never a lead byte
        (b"\xe2\x82", [], b"\xe2\x82"),  # still arriving (the rest of a 3-byte character)
    ],
)
def test_an_invalid_utf8_byte_is_one_key_and_takes_no_other(
    data: bytes, keys: list[str], rest: bytes
) -> None:
    assert split_keys(data) == (keys, rest)


@given(st.binary(max_size=40))
def test_split_keys_is_total_and_keeps_only_a_key_cut_short(data: bytes) -> None:
    """Any bytes: no error; every byte is in a key or in the rest, and the rest is the start of
    a key still arriving (an escape sequence, or a UTF-8 character's first bytes)."""
    keys, rest = split_keys(data)
    assert all(isinstance(k, str) and k for k in keys)
    assert data.endswith(rest)
    if rest:
        assert rest[0] == 0x1B or (0xC2 <= rest[0] <= 0xF4 and len(rest) < 4), rest
        assert all(0x80 <= b <= 0xBF for b in rest[1:]) or rest[0] == 0x1B, rest
