"""Regenerate the tables of docs/rules.md (faces, board, loungers, track, dice-stream vectors)
from the engine.

Usage: python scripts/rules_tables.py [--check]

Only the text between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->`` is
rewritten.  With --check nothing is written; the exit status is 1 (with a message) when a block
differs from what the engine gives.  tests/docs/test_generated.py runs the same check.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.rulesdoc import RULES_MD, GeneratedBlockError, fill_blocks


def main(argv: list[str]) -> int:
    """Rewrite (or with ``--check`` compare) the generated blocks; return the exit status."""
    text = RULES_MD.read_text(encoding="utf-8")
    try:
        fresh = fill_blocks(text)
    except GeneratedBlockError as exc:
        print(f"{RULES_MD}: {exc}", file=sys.stderr)
        return 1
    if "--check" in argv:
        if fresh != text:
            print(f"{RULES_MD} has stale tables: run python scripts/rules_tables.py", file=sys.stderr)
            return 1
        print(f"{RULES_MD}: every generated table is up to date")
        return 0
    if fresh != text:
        RULES_MD.write_text(fresh, encoding="utf-8")
        print(f"updated {RULES_MD}")
    else:
        print(f"{RULES_MD} was up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
