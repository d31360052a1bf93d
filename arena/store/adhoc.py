"""Matches played outside any tournament (``arena match``): recorded like tournament matches.

They belong to no tournament (``tournament_id`` is NULL), show in ``arena replays`` and the web
app like any other match, and do not count in ratings (they have no duplicate dice, and their
time controls vary).
"""

from __future__ import annotations

from sqlmodel import col, select

from .db import Database
from .models import Match, MatchSeat, MatchStatus, utcnow

GROUP = "ad-hoc"


def start_adhoc_match(db: Database, seed: int, version_ids: list[int]) -> int:
    """Store a new running stand-alone match with ``version_ids[k]`` in seat k; return its id.

    Finish it with :func:`arena.store.tournaments.record_result` (or ``record_failure``).
    """
    with db.session() as session:
        last = session.exec(
            select(Match.ordinal)
            .where(col(Match.tournament_id).is_(None))
            .order_by(col(Match.ordinal).desc())
        ).first()
        m = Match(
            tournament_id=None,
            ordinal=0 if last is None else last + 1,
            seed=seed,
            group_key=GROUP,
            status=MatchStatus.RUNNING,
            started_at=utcnow(),
            attempts=1,
        )
        session.add(m)
        session.flush()
        assert m.id is not None
        for seat, vid in enumerate(version_ids):
            session.add(MatchSeat(match_id=m.id, seat=seat, bot_version_id=vid))
        return m.id
