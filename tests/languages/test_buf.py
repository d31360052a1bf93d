"""Protocol quality: ``buf lint`` is clean and ``buf breaking`` finds nothing against the released
protocol (proto-released/), with the pinned buf of tools/buf (``npm ci --prefix tools/buf``;
``./dev test`` installs it and runs the same two checks before pytest)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import BUF, ROOT

RELEASED = ROOT / "proto-released"


def buf(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    if not BUF.exists():
        pytest.fail("buf is not installed: npm ci --prefix tools/buf (./dev test does it)")
    return subprocess.run([str(BUF), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_buf_lint_is_clean() -> None:
    proc = buf("lint", "proto")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_no_breaking_change_against_the_released_protocol() -> None:
    assert (RELEASED / "arena" / "v1" / "arena.proto").is_file()
    proc = buf("breaking", "proto", "--against", "proto-released")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _copy_of_proto(tmp_path: Path) -> Path:
    copy = tmp_path / "proto"
    shutil.copytree(ROOT / "proto", copy, ignore=shutil.ignore_patterns("README.md"))
    return copy


def test_the_breaking_check_catches_an_incompatible_change(tmp_path: Path) -> None:
    copy = _copy_of_proto(tmp_path)
    proto = copy / "arena" / "v1" / "arena.proto"
    text = proto.read_text()
    reply = "  uint64 request_id = 1;\n  // The action"  # in ActionReply
    changed = text.replace(reply, reply.replace("uint64", "uint32"))
    changed = changed.replace("  string reason = 1;", "  string why = 1;")
    assert changed.count("uint32 request_id") == 1 and "string why = 1;" in changed
    proto.write_text(changed)
    proc = buf("breaking", str(copy), "--against", str(RELEASED))
    assert proc.returncode != 0
    assert 'changed type from "uint64" to "uint32"' in proc.stdout
    assert '"reason"' in proc.stdout


def test_the_lint_check_catches_a_badly_named_field(tmp_path: Path) -> None:
    copy = _copy_of_proto(tmp_path)
    proto = copy / "arena" / "v1" / "arena.proto"
    text = proto.read_text()
    proto.write_text(text.replace("  string reason = 1;", "  string reason = 1;\n  string badName = 2;"))
    proc = buf("lint", str(copy))
    assert proc.returncode != 0
    assert "badName" in proc.stdout and "lower_snake_case" in proc.stdout
