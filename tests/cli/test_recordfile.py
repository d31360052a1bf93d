"""``read_record_text`` reads a record file whole, but never more than its limit (plus one byte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli.recordfile import RecordFileTooLarge, read_record_text


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    at = tmp_path / "at.jsonl"
    at.write_text("x" * 100, encoding="utf-8")
    assert read_record_text(at, limit=100) == "x" * 100
    over = tmp_path / "over.jsonl"
    over.write_text("x" * 101, encoding="utf-8")
    with pytest.raises(RecordFileTooLarge) as caught:
        read_record_text(over, limit=100)
    assert caught.value.path == over and "is it the right file?" in str(caught.value)


def test_not_utf8_and_missing_files_raise_their_own_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(UnicodeDecodeError):
        read_record_text(bad)
    with pytest.raises(FileNotFoundError):
        read_record_text(tmp_path / "nosuch.jsonl")


def test_an_endless_device_is_refused_after_reading_one_byte_past_the_limit() -> None:
    with pytest.raises(RecordFileTooLarge):
        read_record_text(Path("/dev/zero"), limit=1024)
