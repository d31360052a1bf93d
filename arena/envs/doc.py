"""The generated tables of ``docs/envs.md``: ``python -m arena.envs.doc`` rewrites them in place,
``python -m arena.envs.doc --check`` fails when the page and the code disagree (a test runs it).

Each table sits between ``<!-- generated: NAME ... -->`` and ``<!-- end generated: NAME -->``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Final

from . import actions, observation

DOC: Final = Path(__file__).resolve().parents[2] / "docs" / "envs.md"


def blocks() -> dict[str, str]:
    """The text of every generated block, by name."""
    return {"actions": actions.markdown_table(), "observation": observation.markdown_table()}


def render(text: str) -> str:
    """``text`` with every generated block replaced by the current table."""
    for name, body in blocks().items():
        pattern = re.compile(
            rf"(<!-- generated: {name} [^\n]*-->\n)(.*?)(<!-- end generated: {name} -->)", re.DOTALL
        )
        if not pattern.search(text):
            raise ValueError(f"{DOC.name} has no generated block {name!r}")
        match = pattern.search(text)
        assert match is not None
        text = text[: match.start(2)] + body + "\n" + text[match.end(2) :]
    return text


def main(argv: list[str] | None = None) -> int:
    """Rewrite the blocks, or with ``--check`` report whether they are current (exit 1 if not)."""
    args = sys.argv[1:] if argv is None else argv
    text = DOC.read_text()
    fresh = render(text)
    if "--check" in args:
        if fresh != text:
            print(f"{DOC} is out of date: run python -m arena.envs.doc", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
