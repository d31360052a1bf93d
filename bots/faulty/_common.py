"""Shared helpers of the faulty bots (not a bot itself)."""

import os
import sys


def fault_at() -> int:
    """The decision number (1-based) at which the bot commits its fault."""
    return int(os.environ.get("FAULT_AT", "3"))


def attempt(bot: str, label: str, action) -> bool:
    """Run one hostile ``action`` (a callable) and log on stderr whether it worked:

        <bot>: <label>: BLOCKED <ExceptionName>: <message>
        <bot>: <label>: SUCCEEDED <what it returned>

    The adversarial tests read these lines: in the sandbox every attempt must be BLOCKED.
    Returns True when the attempt succeeded.
    """
    try:
        got = action()
    except Exception as exc:  # every way of failing counts as blocked, and is named
        print(f"{bot}: {label}: BLOCKED {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return False
    print(f"{bot}: {label}: SUCCEEDED {got!s:.200}", file=sys.stderr, flush=True)
    return True
