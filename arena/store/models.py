"""The database tables (SQLModel).  No game logic lives here.

Status machine of a match: ``queued`` -> ``running`` -> ``finished`` | ``failed``; a ``running``
match whose coordinator died is put back to ``queued`` on resume.  A finished match's seats and
replay are written in the same transaction as its status, so a match is either wholly finished
or not at all.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, Column, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC (stored as UTC)."""
    return datetime.now(UTC)


TOURNAMENT_NAME_LENGTH = 128  # the tournament name's column (VARCHAR: PostgreSQL refuses longer)


class MatchStatus:
    """The closed set of match states."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class Bot(SQLModel, table=True):
    """A named bot; its code lives in immutable versions."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow)
    removed_at: datetime | None = None


class BotVersion(SQLModel, table=True):
    """One immutable upload of a bot: the artifact's hash and how to launch it."""

    __table_args__ = (UniqueConstraint("bot_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    bot_id: int = Field(foreign_key="bot.id", index=True)
    version: int
    sha256: str = Field(index=True, max_length=64)
    filename: str = Field(max_length=255)
    artifact: str  # path of the stored copy (content-addressed), or "" for a remote bot
    command: str  # JSON list: the interpreter argv prefix; the artifact path is appended
    kind: str = Field(default="local", max_length=16)  # "local" or "remote"
    persistent: bool = True  # may be kept running across matches
    token_hash: str | None = Field(default=None, max_length=64)  # remote bots: sha256 of the token
    created_at: datetime = Field(default_factory=utcnow)


class Tournament(SQLModel, table=True):
    """A tournament: its format, its field, its time control and its status."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=TOURNAMENT_NAME_LENGTH)
    format: str = Field(max_length=32)  # a name in arena.tournament.formats.REGISTRY
    table_sizes: str = Field(max_length=16)  # e.g. "2" or "2,4": players per table
    games: int  # distinct seeds per table (each played under every seat rotation)
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))  # seeds go up to 2**63 - 1
    # the time control, read back by arena.store.tournaments.time_control_of (one place)
    move_time: float  # seconds per decision
    bank: float  # overage bank, seconds
    cpu_clock: bool = Field(default=False, sa_column_kwargs={"server_default": "0"})  # CPU, not wall
    status: str = Field(default="created", max_length=16)  # created, running, finished
    config: str = "{}"  # JSON: the format's settings (bots, sandbox, rounds, options)
    rules: str | None = Field(default=None, max_length=32)  # rules variant; None: the standard rules
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


class TournamentEntry(SQLModel, table=True):
    """A bot version taking part in a tournament."""

    tournament_id: int = Field(foreign_key="tournament.id", primary_key=True)
    bot_version_id: int = Field(foreign_key="botversion.id", primary_key=True)
    role: str = Field(default="field", max_length=16)  # "field" or "candidate" (gauntlet)
    position: int | None = None  # index in the field (registration order; formats pair by it)


class Match(SQLModel, table=True):
    """One scheduled match of a tournament (or a stand-alone match)."""

    __table_args__ = (UniqueConstraint("tournament_id", "ordinal"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int | None = Field(default=None, foreign_key="tournament.id", index=True)
    ordinal: int  # position in the tournament's schedule
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    group_key: str = Field(default="", max_length=64, index=True)  # duplicate-dice set
    round: int = Field(default=0, sa_column_kwargs={"server_default": "0"})  # the format's round
    status: str = Field(default=MatchStatus.QUEUED, max_length=16, index=True)
    termination: str | None = Field(default=None, max_length=16, index=True)
    attempts: int = 0
    error: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = Field(default=None, index=True)
    duration: float | None = None


class TournamentBye(SQLModel, table=True):
    """An entry that sat out a round of a tournament (Swiss, knockout) and what it scored."""

    __tablename__ = "tournament_bye"

    tournament_id: int = Field(foreign_key="tournament.id", primary_key=True)
    round: int = Field(primary_key=True)
    bot_version_id: int = Field(foreign_key="botversion.id", primary_key=True)
    points: float


class MatchSeat(SQLModel, table=True):
    """One seat of a match: who sat there and how it went."""

    match_id: int = Field(foreign_key="match.id", primary_key=True)
    seat: int = Field(primary_key=True)
    bot_version_id: int = Field(foreign_key="botversion.id", index=True)
    score: int | None = None
    placing: int | None = None
    termination: str | None = Field(default=None, max_length=32)
    detail: str | None = None
    think_total: float | None = None
    think_max: float | None = None
    decisions: int | None = None
    cpu_time: float | None = None  # CPU seconds of the bot's process tree during the match


class Replay(SQLModel, table=True):
    """A match's replay: zlib-compressed JSON Lines and the sha256 of the uncompressed text."""

    match_id: int = Field(foreign_key="match.id", primary_key=True)
    sha256: str = Field(max_length=64)
    size: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class CoordinatorLease(SQLModel, table=True):
    """Who coordinates a tournament now: at most one row (one coordinator) per tournament.

    The holder renews ``expires_at`` by a heartbeat; a lease past its expiry, or one whose
    holder process is gone from this host, may be taken over (see :mod:`arena.store.lease`).
    """

    __tablename__ = "coordinator_lease"

    tournament_id: int = Field(foreign_key="tournament.id", primary_key=True)
    token: str = Field(max_length=64)  # the holder's secret: only it renews or releases the lease
    host: str = Field(max_length=255)
    pid: int
    pid_start: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    acquired_at: datetime
    heartbeat_at: datetime
    expires_at: datetime


class RatingRow(SQLModel, table=True):
    """A rating as computed at one time (the history is every row ever written)."""

    __tablename__ = "rating"

    id: int | None = Field(default=None, primary_key=True)
    system: str = Field(max_length=16, index=True)  # elo, openskill, pl
    scope: str = Field(default="all", max_length=32, index=True)  # "all" or "tournament:<id>"
    bot_version_id: int = Field(foreign_key="botversion.id", index=True)
    rating: float
    lo: float
    hi: float
    games: int
    computed_at: datetime = Field(default_factory=utcnow, index=True)


class MatchOwner(SQLModel, table=True):
    """The process playing a stand-alone match (revision 0008): only it ever finishes the match,
    so a running match whose process is gone from its host was abandoned (:mod:`.owners`)."""

    __tablename__ = "match_owner"

    match_id: int = Field(foreign_key="match.id", primary_key=True)
    host: str = Field(max_length=255)
    pid: int
    pid_start: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))


from . import models_accounts as models_accounts  # noqa: E402  (tables of revision 0006)
from . import models_ladder as models_ladder  # noqa: E402  (tables of revision 0007)
