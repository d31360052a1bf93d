"""How a bot's process is doing, in the sandbox's own terms (no referee, no forfeit words).

:meth:`arena.sandbox.BotProcess.probe` answers with a :data:`Probed` pair, or None while the
process runs normally; the referee maps it to a forfeit reason
(:func:`arena.referee.faults.reason_of_process`).
"""

from __future__ import annotations

from enum import StrEnum


class ProcessStatus(StrEnum):
    """A bot process that is not running normally."""

    EXITED = "exited"  # it ended (exit status or signal), or is gone / a zombie
    STOPPED = "stopped"  # it, or a process of its tree, is stopped (SIGSTOP, a debugger): frozen


Probed = tuple[ProcessStatus, str]
"""(status, how in words), e.g. ``(EXITED, "the process exited with status 1")``."""
