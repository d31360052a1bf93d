"""The entry point the strength tools share (``python -m arena.strength.duel`` and the rest).

Contract: :func:`run_tool` makes the three standard streams usable first (a closed or wrong-way
stream, as ``2>&-`` or ``2</dev/null`` leave it, becomes /dev/null, as ``arena`` does), then runs
the tool's ``main`` and ends the process with its status.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn


def run_tool(main: Callable[[], int]) -> NoReturn:
    """Run a tool's ``main()`` with usable standard streams and exit with what it returns."""
    from arena.cli.closed_output import open_standard_streams

    open_standard_streams()
    sys.exit(main())
