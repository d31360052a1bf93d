"""Write docs/board.svg from arena/engine/board.py.

Usage: python scripts/board_svg.py [--check]

With --check nothing is written; the exit status is 1 (with a message) when the committed SVG
differs from what the board data gives.  tests/docs/test_generated.py runs the same check.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.rulesdoc import BOARD_SVG, board_svg


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) docs/board.svg; return the exit status."""
    svg = board_svg()
    if "--check" in argv:
        if not BOARD_SVG.exists() or BOARD_SVG.read_text(encoding="utf-8") != svg:
            print(f"{BOARD_SVG} is out of date: run python scripts/board_svg.py", file=sys.stderr)
            return 1
        print(f"{BOARD_SVG} is up to date")
        return 0
    BOARD_SVG.parent.mkdir(parents=True, exist_ok=True)
    BOARD_SVG.write_text(svg, encoding="utf-8")
    print(f"wrote {BOARD_SVG}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
