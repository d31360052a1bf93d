"""``arena evaluate`` runs the bots sandboxed by default: a bot that reports what it sees finds
itself uid 65534 under bubblewrap, without the arena's files; ``--no-sandbox`` is the user's."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.sandbox import bwrap_problem

ARENA = str(Path(sys.executable).parent / "arena")
VIEW_BOT = str(Path(__file__).resolve().parent / "view_bot.py")


def views(tmp_path: Path, *flags: str) -> list[str]:
    """Play a short evaluation of the view bot; return the view lines of its stderr logs."""
    logs = tmp_path / ("logs" + "".join(flags))
    home = tempfile.mkdtemp(prefix="arena-home-", dir=tmp_path)
    env = {**os.environ, "ARENA_HOME": home, "VIEW_PROBE_DIR": home}
    env.pop("ARENA_SANDBOX", None)
    args = [ARENA, "evaluate", VIEW_BOT, "--vs", "random", "--games", "2", "--seed", "3", "--quiet"]
    proc = subprocess.run(
        [*args, "--logs", str(logs), *flags], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = [
        line
        for log in sorted(logs.glob("*view*.stderr.log"))
        for line in log.read_text().splitlines()
        if line.startswith("view:")
    ]
    assert lines, "the view bot did not run"
    return lines


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox here: {bwrap_problem()}")
def test_evaluate_runs_the_bots_sandboxed_by_default(tmp_path: Path) -> None:
    for line in views(tmp_path):
        assert "uid=65534" in line
        assert "probe_dir_visible=False" in line  # the arena's data directory is not in its world
        assert "init=/usr/bin/bwrap" in line or "init=bwrap" in line  # its PID namespace is the sandbox's


def test_evaluate_no_sandbox_runs_the_bots_as_the_user(tmp_path: Path) -> None:
    for line in views(tmp_path, "--no-sandbox"):
        assert f"uid={os.getuid()}" in line and "probe_dir_visible=True" in line
        assert "bwrap" not in line
