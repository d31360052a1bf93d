"""Item 11: keepalive figures agree between code and protocol document, and a frozen bot is
judged ``stalled`` at the default clock.  Real bot processes (bots/faulty/freezer_bot.py stops
itself with SIGSTOP 50 ms after answering its FAULT_AT-th decision), real gRPC."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from arena.matchrunner import play_local_match, resolve_bot
from arena.referee import MatchResult, Reason, RefereeConfig, TimeControl

ROOT = Path(__file__).resolve().parents[2]
FREEZER = ROOT / "bots" / "faulty" / "freezer_bot.py"
FAULT_AT = "5"


def play_freezer(control: TimeControl, config: RefereeConfig | None = None) -> tuple[MatchResult, float]:
    """greedy (seat 0) against the freezer (seat 1); the result and the match's wall time."""
    start = time.monotonic()
    result = asyncio.run(
        play_local_match(
            [resolve_bot("greedy"), resolve_bot(str(FREEZER))],
            11,
            control,
            config=config,
            extra_env=[{}, {"FAULT_AT": FAULT_AT}],
        )
    )
    return result, time.monotonic() - start


def test_protocol_document_states_the_keepalive_the_code_uses() -> None:
    text = (ROOT / "proto" / "README.md").read_text()
    match = re.search(r"HTTP/2 PING every (\d+(?:\.\d+)?) s and closes the connection when one is\s+"
                      r"not answered within (\d+(?:\.\d+)?) s", text)  # fmt: skip
    assert match, "proto/README.md no longer states the keepalive figures"
    config = RefereeConfig()
    assert float(match.group(1)) * 1000 == config.keepalive_ms
    assert float(match.group(2)) * 1000 == config.keepalive_timeout_ms
    checklist = re.search(r"keepalive pings every (\d+(?:\.\d+)?) s", text)
    assert checklist and float(checklist.group(1)) * 1000 == config.keepalive_ms


def test_frozen_bot_is_stalled_at_the_default_clock() -> None:
    """Default clock (1 s + 10 s bank) and default referee settings: the keepalive notices the
    frozen process within about 4 s, long before its 11 s budget runs out (with the old 5 s +
    10 s keepalive the deadline came first and the seat was judged a timeout)."""
    control = TimeControl()
    assert (control.move_time, control.bank) == (1.0, 10.0)
    result, elapsed = play_freezer(control)
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1
    assert forfeit.reason is Reason.STALLED, forfeit
    assert "stopped" in forfeit.detail
    assert forfeit.evidence["time_used_ms"] < 8000, forfeit.evidence  # the keepalive, not the deadline
    assert elapsed < 30


def test_frozen_bot_at_a_short_clock_is_stalled_not_timeout() -> None:
    """With a move time shorter than any keepalive round (0.3 s + 0.2 s bank, keepalive at 30 s)
    the deadline comes first; the referee then finds the process stopped: ``stalled``."""
    config = RefereeConfig(keepalive_ms=30_000, keepalive_timeout_ms=30_000)
    result, _ = play_freezer(TimeControl(move_time=0.3, bank=0.2), config)
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1
    assert forfeit.reason is Reason.STALLED, forfeit
    assert "stopped" in forfeit.detail and "no answer after" in forfeit.detail
