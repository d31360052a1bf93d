"""Issue 12 item 9: a bot's token never travels on a command line.

While a real match runs (sandboxed and unsandboxed), every ``/proc/*/cmdline`` on the host is read:
none may hold one of the match's tokens (they are recorded by a real referee that notes the
sessions it mints).  The tokens did reach the bots: through the environment, which only the same
uid can read.  Unsandboxed, the snoop bot (bots/faulty/snoop_bot.py) finds no opponent token on
any command line; it does find it in an environment (same uid: the README's security model says
so for ``--no-sandbox``).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from arena.matchrunner import play_local_match, resolve_bot
from arena.referee import TimeControl
from arena.referee.match import Match
from arena.sandbox import SandboxLimits, bwrap_problem

from .helpers import FAULTY, all_pids, cmdlines, recording_tokens

CONTROL = TimeControl(move_time=2.0, bank=5.0)


def _environ_holders(token: str) -> set[int]:
    found = set()
    for pid in all_pids():
        try:
            if token.encode() in Path(f"/proc/{pid}/environ").read_bytes():
                found.add(pid)
        except OSError:
            continue
    return found


@pytest.mark.parametrize("sandboxed", [False, True], ids=["unsandboxed", "sandboxed"])
def test_no_command_line_on_the_host_carries_a_token_during_a_match(sandboxed: bool, tmp_path: Path) -> None:
    if sandboxed and bwrap_problem() is not None:
        pytest.skip(f"no bubblewrap here: {bwrap_problem()}")
    seen: dict[str, object] = {}

    with recording_tokens() as minted:

        def look(match: Match) -> None:  # at the first event: every bot is running and connected
            if seen:
                return
            tokens = [s.token for s in minted]
            seen["tokens"] = tokens
            seen["on_cmdline"] = {
                pid: line for pid, line in cmdlines().items() if any(t in line for t in tokens)
            }
            seen["in_environ"] = [_environ_holders(t) for t in tokens]

        result = asyncio.run(
            play_local_match(
                [resolve_bot("greedy"), resolve_bot("random")],
                11,
                CONTROL,
                match_id="tok",
                log_dir=tmp_path,
                on_event=look,
                sandbox=SandboxLimits() if sandboxed else None,
            )
        )
    assert not result.forfeits, result.forfeits
    assert len(seen["tokens"]) == 2  # type: ignore[arg-type]
    assert seen["on_cmdline"] == {}, f"tokens on command lines: {seen['on_cmdline']}"
    # ... and the bots did get them, in their environment (only the same uid can read that)
    assert all(seen["in_environ"]), seen["in_environ"]  # type: ignore[arg-type]


def test_unsandboxed_snoop_finds_no_token_on_a_command_line(tmp_path: Path) -> None:
    """The control of the hostile-bot suite found the opponent's token on its command line; now
    only its environment has it (readable because --no-sandbox bots share the arena's uid)."""
    (tmp_path / "tmp").mkdir()
    env = {
        "ARENA_TEST_TOKEN_SOURCES": "1",
        "ARENA_TEST_TOKEN_SCOPE": str(os.getpid()),  # this test's processes, not other tests'
        "ARENA_TEST_WRITE_PATHS": str(tmp_path / "snoop-was-here"),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    result = asyncio.run(
        play_local_match(
            [resolve_bot(str(FAULTY / "snoop_bot.py")), resolve_bot("greedy")],
            5,
            CONTROL,
            match_id="snoop",
            log_dir=tmp_path,
            extra_env=[env, {}],
            sandbox=None,
        )
    )
    assert not result.forfeits, result.forfeits
    log = (tmp_path / "snoop-seat0-snoop_bot.stderr.log").read_text(errors="replace")
    lines = {line.split(": ")[1]: line for line in log.splitlines() if line.startswith("snoop: tokens:")}
    assert "BLOCKED LookupError" in lines["tokens:/proc/*/cmdline"], log
    # unsandboxed bots run as the arena's (here: the test's) uid, so environments are readable
    assert "SUCCEEDED" in lines["tokens:/proc/*/environ"], log
