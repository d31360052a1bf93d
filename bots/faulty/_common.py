"""Shared helpers of the faulty bots (not a bot itself)."""

import os


def fault_at() -> int:
    """The decision number (1-based) at which the bot commits its fault."""
    return int(os.environ.get("FAULT_AT", "3"))
