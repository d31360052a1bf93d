"""Hosting matches: one referee server and the bot processes of its tables (:class:`MatchHost`).

``arena match``, ``arena evaluate``, the tournament workers and ``arena serve``'s lobby all play
through it; see :mod:`arena.hosting.host` for what it takes care of.
"""

from .host import HOST_DEFAULT, KEPT_LIMIT, MatchHost
from .seats import BotSpec, LocalSeat, sandbox_choice

__all__ = ["HOST_DEFAULT", "KEPT_LIMIT", "BotSpec", "LocalSeat", "MatchHost", "sandbox_choice"]
