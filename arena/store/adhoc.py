"""Matches played outside any tournament (``arena match``): recorded like tournament matches.

They belong to no tournament (``tournament_id`` is NULL), show in ``arena replays`` and the web
app like any other match, and do not count in ratings (they have no duplicate dice, and their
time controls vary).
"""

from __future__ import annotations

from .db import Database
from .tournaments import add_match

GROUP = "ad-hoc"


def start_adhoc_match(db: Database, seed: int, version_ids: list[int]) -> int:
    """Store a new running stand-alone match with ``version_ids[k]`` in seat k; return its id.

    Finish it with :func:`arena.store.tournaments.record_result` (or ``record_failure``).
    """
    return add_match(db, None, seed, GROUP, version_ids)
