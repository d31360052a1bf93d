"""The per-seat seed a bot gets for its own randomness (``Welcome.bot_seed``).

A bot that draws from a generator seeded with it repeats its choices when the match is replayed
(same match seed, same seat), so a rerun of a tournament gives the same results.  The seed is a
one-way function of the match seed, which the bots never see (the dice stream is a function of
it): knowing every seat's bot seed does not reveal the match seed, hence not the dice.
"""

from __future__ import annotations

import hashlib

DOMAIN = "arena.v1 bot seed"  # keeps these hashes apart from any other use of the match seed


def bot_seed(match_seed: int, seat: int) -> int:
    """The 64-bit bot seed of ``seat`` in a match played with ``match_seed``: the first 8 bytes,
    big-endian, of sha256 of ``"arena.v1 bot seed:<match seed>:<seat>"`` (both in decimal)."""
    if seat < 0:
        raise ValueError(f"a seat is 0 or more, got {seat}")
    digest = hashlib.sha256(f"{DOMAIN}:{match_seed}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
