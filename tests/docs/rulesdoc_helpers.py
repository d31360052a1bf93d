"""Reading docs/rules.md in tests: its sections, its rule definitions and its Markdown tables."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[2]
RULES: Final = REPO / "docs" / "rules.md"

# A rule is defined by its anchor followed by its bold id: <a id="r12"></a>**R12 ...
DEFINITION: Final = re.compile(r'<a id="r(\d+)"></a>\*\*R(\d+)\b')
CITATION: Final = re.compile(r"\bR(\d+)\b")


def rules_text() -> str:
    return RULES.read_text(encoding="utf-8")


def defined_rules(text: str) -> list[int]:
    """Rule numbers in the order docs/rules.md defines them (anchor and bold id must agree)."""
    out = []
    for m in DEFINITION.finditer(text):
        assert m.group(1) == m.group(2), f"anchor r{m.group(1)} defines R{m.group(2)}"
        out.append(int(m.group(1)))
    return out


def section_numbers(text: str) -> set[str]:
    """``"5"``, ``"6.4"``, ...: the numbered headings (``## 5. ...``, ``### 6.4 ...``)."""
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, flags=re.MULTILINE))


def section(text: str, number: str) -> str:
    """The text of the numbered section ``number`` up to the next heading of its level or above."""
    level = "##" if "." not in number else "###"
    m = re.search(rf"^{level} {re.escape(number)}\.? .*$", text, flags=re.MULTILINE)
    assert m is not None, f"no section {number}"
    rest = text[m.end() :]
    stop = re.search("^#{2," + str(len(level)) + "} ", rest, flags=re.MULTILINE)
    return rest[: stop.start()] if stop else rest


def tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of ``text``: rows (without the header and the rule line) of cells."""
    out: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = []
                out.append(current)
                current.append(cells)  # header, dropped below
            elif set("".join(cells)) <= set("-:"):
                continue
            else:
                current.append(cells)
        else:
            current = None
    return [t[1:] for t in out]


def code(cell: str) -> str:
    """The text of a cell that is one code span (```name``` -> ``name``)."""
    m = re.fullmatch(r"`([^`]+)`", cell)
    assert m, f"expected a code span, got {cell!r}"
    return m.group(1)
