"""Launching bot processes: commands, process groups, bounded output capture, reaping."""

from .launcher import BotLaunchError, BotProcess, launch_command

__all__ = ["BotLaunchError", "BotProcess", "launch_command"]
