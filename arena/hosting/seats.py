"""What a match host is asked to seat: bots to launch (:class:`LocalSeat`), and the sandbox choice.

A seat is either a :class:`LocalSeat` -- a bot program the host launches as a process -- or a
:class:`~arena.referee.sessions.BotSession` -- a bot that connects by itself (a remote bot of the
lobby), for which the host launches nothing.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, field

from arena.sandbox.limits import SandboxLimits

SANDBOX_ENV = "ARENA_SANDBOX"
"""``ARENA_SANDBOX=off`` (or 0, no, false) runs bots unsandboxed, like ``--no-sandbox``."""


def sandbox_choice(no_sandbox: bool, limits: SandboxLimits | None = None) -> SandboxLimits | None:
    """The sandbox to use: ``limits`` (default :class:`SandboxLimits`), or None when the user
    opted out (``--no-sandbox`` or ``ARENA_SANDBOX=off``)."""
    if no_sandbox or os.environ.get(SANDBOX_ENV, "").lower() in ("off", "0", "no", "false"):
        return None
    return limits or SandboxLimits()


@dataclass(frozen=True)
class BotSpec:
    """A bot to launch: a display name and the argv that starts it."""

    name: str
    command: tuple[str, ...]


@dataclass(frozen=True)
class LocalSeat:
    """A seat whose bot the host launches.

    ``persistent``: the bot process is kept running after the match, on a persistent session, and
    plays the host's next match that asks for the same seat (same ``identity``, name, command and
    sandbox); it is restarted when it has died or forfeited.  Otherwise the bot is launched for
    this match only and stopped after it.  ``identity`` tells apart kept-running bots that share a
    program (a bot version id, an evaluation table's role).  ``extra_env`` is added to the bot's
    environment, read when the bot starts (after every seat's token is minted).
    """

    bot: BotSpec
    persistent: bool = False
    identity: Hashable = None
    label: str = ""  # log file stem of a kept-running bot (default: the host's)
    extra_env: dict[str, str] | None = field(default=None, compare=False, hash=False)
