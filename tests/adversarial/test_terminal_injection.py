"""A bot cannot write to the terminal of whoever runs ``arena``: gRPC's C core logged the debug
text of an HTTP/2 GOAWAY raw to standard error, so ``bots/faulty/goaway_bot.py`` put escape
sequences (a window title, colours, a screen clear) on the operator's terminal, from ``arena
match`` and from the worker processes of ``arena tournament run`` alike (found by running an
outside review's raw-HTTP/2 bots in a tournament).  The package turns that log off before gRPC
is imported; the bot is judged as for any silence (``timeout``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).with_name("arena")
BOT = ROOT / "bots" / "faulty" / "goaway_bot.py"


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("GRPC_VERBOSITY", "ARENA_DATABASE_URL")}
    env |= {"ARENA_HOME": str(home), "ARENA_SANDBOX": "off"}
    return subprocess.run([str(ARENA), *args], cwd=home, env=env, capture_output=True, timeout=180)


CLOCK = ["--move-time", "0.5", "--bank", "1", "--seed", "5"]
COMMANDS = [
    ["match", str(BOT), "random", *CLOCK],
    ["tournament", "run", str(BOT), "random", "--jobs", "2", *CLOCK],
]


@pytest.mark.parametrize("command", COMMANDS, ids=["match", "tournament"])
def test_a_goaway_with_escape_sequences_reaches_no_terminal(tmp_path: Path, command: list[str]) -> None:
    run = _run(tmp_path, *command)
    said = run.stdout + run.stderr
    assert b"\x1b" not in said and b"PWNED" not in said and b"Got goaway" not in said, said[-2000:]
    text = said.decode()
    assert "goaway_bot" in text and "timeout" in text, text[-2000:]
    log = (tmp_path / "logs").rglob("*goaway_bot*.stderr.log")
    assert any("sent a GOAWAY" in p.read_text() for p in log)  # the bot did send it
