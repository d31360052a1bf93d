"""README's reliability section names the test behind each promise: every test it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Reliability: what is promised, and the test that proves it"


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else None]


def _named_tests(section: str) -> list[tuple[str, list[str]]]:
    """(file under tests/, [test function names]) for every test cell of the tables; a name
    written ``::name`` after a first ``file::name`` belongs to that same file."""
    out: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| promise") or line.startswith("|---"):
            continue
        cell = line.rstrip(" |").rsplit("|", 1)[-1]
        current: str | None = None
        for ref in re.findall(r"`([^`]+)`", cell):
            path, _, name = ref.partition("::")
            if path:
                current = path
                out.append((path, []))
            if name:
                assert current is not None, f"{ref!r} names no file"
                out[-1][1].append(name)
    return out


def test_every_named_test_exists() -> None:
    named = _named_tests(_section())
    assert len(named) >= 20
    for path, names in named:
        file = ROOT / "tests" / path
        assert file.is_file(), f"README names tests/{path}, which does not exist"
        source = file.read_text(encoding="utf-8")
        for name in names:
            assert re.search(rf"^(async )?def {re.escape(name)}\(", source, re.M), (
                f"README names tests/{path}::{name}, which is not defined there"
            )
