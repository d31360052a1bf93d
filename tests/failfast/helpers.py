"""Helpers of the fail-fast tests: the real ``arena`` console script, broken bot files, /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ARENA = Path(sys.executable).parent / "arena"
REPO = Path(__file__).resolve().parents[2]

SYNTAX_ERROR = "def choose(state, legal:\n    return legal[0]\n"
RAISES_AT_IMPORT = (
    "import sys\nprint('warming up the pool', file=sys.stderr)\nraise RuntimeError('no swimming today')\n"
)
EXITS_3 = "import sys\nsys.exit(3)\n"
CRASHES_MID_MATCH = """
from arena.sdk import Bot, run


class Crasher(Bot):
    name = "crasher"
    decisions = 0

    def choose(self, state, legal):
        self.decisions += 1
        if self.decisions == 3:
            return legal[int(1 / 0)]
        return legal[0]


run(Crasher())
"""


def write_bot(folder: Path, name: str, text: str) -> Path:
    """``folder/name`` holding ``text``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class Run:
    """A finished ``arena`` command: exit status, output, and its wall time from the start."""

    code: int
    stdout: str
    stderr: str
    seconds: float


def arena(*args: str, home: Path, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None) -> Run:
    """Run ``arena ARGS`` in ``cwd`` with ``ARENA_HOME=home`` (the default SQLite database)."""
    full = {k: v for k, v in os.environ.items() if k not in ("ARENA_DATABASE_URL", "ARENA_SANDBOX")}
    full.update(ARENA_HOME=str(home), COLUMNS="200", **(env or {}))
    start = time.monotonic()
    proc = subprocess.run(
        [str(ARENA), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout
    )
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def cli(*args: str, home: Path, code: int | None = 0) -> Run:
    """``arena ARGS`` in this process (Typer's runner: no interpreter start-up per call)."""
    from typer.testing import CliRunner

    from arena.cli.main import app

    start = time.monotonic()
    result = CliRunner().invoke(app, list(args), env={"ARENA_HOME": str(home), "ARENA_DATABASE_URL": None})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"arena {' '.join(args)} crashed: {result.exception!r}") from result.exception
    run = Run(result.exit_code, result.stdout, result.stderr, time.monotonic() - start)
    if code is not None:
        assert run.code == code, f"arena {' '.join(args)}: exit {run.code}, expected {code}\n{run}"
    return run
