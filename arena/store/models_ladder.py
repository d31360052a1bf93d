"""The ladder's tables (revision 0007): incremental ratings, their history, the cached fit.

- ``ladder_rating``: each ladder bot version's current OpenSkill belief (``mu``, ``sigma``) and
  games rated, one row per (ladder tournament, version).  Written in the same transaction as the
  match result it follows from (:mod:`arena.ratings.incremental`), so after a crash it is exactly
  the fold of the recorded results: never one update short, never one twice.
- ``ladder_rating_history``: one row per (match, version): the belief right after that match.
  Unique per (match, version), so a second update for one match cannot be stored.
- ``ladder_fit``: the cached Plackett-Luce fit of a ladder (JSON), with the ``stamp`` it was
  computed at (the highest ``ladder_rating_history.id`` then): stale as soon as any result is
  rated after it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from .models import utcnow


class LadderRating(SQLModel, table=True):
    """A ladder bot version's current OpenSkill belief."""

    __tablename__ = "ladder_rating"

    tournament_id: int = Field(foreign_key="tournament.id", primary_key=True)
    bot_version_id: int = Field(foreign_key="botversion.id", primary_key=True)
    mu: float
    sigma: float
    games: int = 0
    last_match_id: int | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class LadderRatingHistory(SQLModel, table=True):
    """A bot version's belief right after one match."""

    __tablename__ = "ladder_rating_history"
    __table_args__ = (
        UniqueConstraint("match_id", "bot_version_id"),
        Index("ix_ladder_rating_history_version", "bot_version_id", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournament.id", index=True)
    match_id: int = Field(foreign_key="match.id")
    bot_version_id: int = Field(foreign_key="botversion.id")
    mu: float
    sigma: float
    games: int
    placing: int
    at: datetime = Field(default_factory=utcnow)


class LadderFit(SQLModel, table=True):
    """A ladder's cached Plackett-Luce fit and the stamp it was computed at."""

    __tablename__ = "ladder_fit"

    tournament_id: int = Field(foreign_key="tournament.id", primary_key=True)
    stamp: int
    data: str  # JSON: {"ratings": {version id: [rating, lo, hi, games]}, "matches": n}
    computed_at: datetime = Field(default_factory=utcnow)
