"""The ``arena`` console script's module (``pyproject.toml``: ``arena = "arena.cli.entry:main"``).

A Ctrl-C that lands while the command line loads (the imports of :mod:`arena.cli.main`: tens of
milliseconds, longer on a loaded machine, before :func:`arena.cli.main.main` has installed its
handling) raised KeyboardInterrupt out of the console script's import line: a traceback and
status -2 instead of the one line and 130 of any later moment (seen in a clean-clone run).  The
script's import of this module catches it there and ends as a later Ctrl-C does.  Only the
standard library runs before the ``try``.
"""

from __future__ import annotations

import os

try:
    from arena.cli.main import main
except KeyboardInterrupt:
    # arena.cli.interrupt may be the module the interrupt cut short: its one line by hand
    try:
        lead = "\n" if os.isatty(2) else ""  # after the terminal's echoed "^C"
        os.write(2, f"{lead}arena: interrupted (Ctrl-C)\n".encode())
    except OSError:  # no standard error: the status says it
        pass
    os._exit(130)

__all__ = ["main"]

if __name__ == "__main__":  # ``python -m arena.cli.entry ...`` runs the command, as ``arena`` does
    main()
