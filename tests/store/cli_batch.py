"""Run several ``arena`` commands in one interpreter (Typer's runner) and print their outcomes as
JSON: ``python tests/store/cli_batch.py '[["tournament", "list"], ...]'``.

For tests that must run commands in a changed environment (a read-only mount, dropped
capabilities): one interpreter start-up instead of one per command, the same command code.  A
command that raises (a crash, not an exit) is reported with its traceback in ``crash``.
"""

from __future__ import annotations

import json
import sys
import traceback


def main() -> None:
    from typer.testing import CliRunner

    from arena.cli.main import app

    out = []
    for args in json.loads(sys.argv[1]):
        result = CliRunner().invoke(app, args)
        crash = None
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            crash = "".join(traceback.format_exception(result.exception))
        out.append({"args": args, "code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr,
                    "crash": crash})  # fmt: skip
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
