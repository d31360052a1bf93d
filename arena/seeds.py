"""Seeds that must stay secret while their games are played: drawn from the operating system's
randomness, never from :mod:`random`.

A match seed tells every throw of its games (``docs/rules.md``, §5), and a tournament, ladder or
lobby seed tells every match seed that follows from it.  The arena keeps them secret until the
games are over, then publishes them (a finished replay carries its seed, so anyone can verify
it).  Python's :mod:`random` is a Mersenne Twister: its next outputs follow from 624 earlier
32-bit ones, and a long-running ``arena serve`` published every finished game's seed, all drawn
from that one generator (a person could start and resign games in "play a seat" to collect them,
then know the dice of the next game started).  :func:`secret_seed` draws from :mod:`secrets`
instead, whose outputs say nothing about the next ones.
"""

from __future__ import annotations

import secrets

from arena.engine.chance import SEED_LIMIT


def secret_seed() -> int:
    """A seed for a match, tournament, ladder or lobby, uniform in ``0 .. SEED_LIMIT - 1`` and
    unpredictable from any seed drawn before it (module docstring)."""
    return secrets.randbelow(SEED_LIMIT)
