"""Launching bot processes: commands, process groups, bounded output capture, reaping."""

from .bwrap import SandboxUnavailableError, bwrap_problem, require_bwrap
from .launcher import BotLaunchError, BotProcess, kill_all_bots, launch_command
from .limits import SandboxLimits

__all__ = [
    "BotLaunchError",
    "BotProcess",
    "SandboxLimits",
    "SandboxUnavailableError",
    "bwrap_problem",
    "kill_all_bots",
    "launch_command",
    "require_bwrap",
]
