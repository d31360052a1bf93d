"""What a bot's page shows: its versions with their validation, recent matches, slowest
decisions, and forfeits with their evidence (read from the stored replays)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlmodel import col, func, select

from arena.endings import Reason, is_forfeit
from arena.referee.crashinfo import public_detail
from arena.store.botnames import FILE_PREFIX, HUMAN_PREFIX
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat
from arena.store.models_accounts import BotOwner, BotUpload, UploadStatus, UserAccount
from arena.store.tournaments import CorruptReplayError, UnknownMatchError, load_replay
from arena.web import queries
from arena.web.privacy import Keep, public_reason, public_row
from arena.web.queries import MatchFilters, MatchRow

from .store import match_ids

RECENT = 20
SLOWEST = 10
FORFEITS = 10


class NoSuchBotError(LookupError):
    """No bot of that name."""


@dataclass(frozen=True)
class VersionView:
    """One version and its validation (``status`` "active" for a CLI-registered version)."""

    id: int
    version: int
    filename: str
    sha256: str
    created_at: datetime
    status: str
    uploaded: bool
    keep_previous: bool
    reason: str | None
    stderr_tail: str | None
    validation: list[MatchRow]

    def to_json(self, *, private: bool) -> dict[str, Any]:
        """JSON-ready data (the stderr tail only when ``private``: the owner's view)."""
        return {
            "version": self.version,
            "filename": self.filename,
            "sha256": self.sha256,
            "created_at": queries.iso(self.created_at),
            "status": self.status,
            "uploaded": self.uploaded,
            "keep_previous": self.keep_previous,
            "reason": self.reason,
            **({"stderr_tail": self.stderr_tail} if private else {}),
            "validation_matches": [m.to_json() for m in self.validation],
        }


@dataclass(frozen=True)
class Slow:
    """One of the bot's slowest decisions: the match, the version and the time."""

    match_id: int
    version: int
    think_max: float
    decisions: int | None


@dataclass(frozen=True)
class ForfeitView:
    """A match the bot forfeited: why, and the evidence kept with it."""

    match_id: int
    version: int
    termination: str
    detail: str | None
    evidence: dict[str, Any]


@dataclass(frozen=True)
class BotPage:
    """Everything the page of bot ``name`` shows."""

    id: int
    name: str
    owner: str | None
    owner_id: int | None
    removed: bool
    versions: list[VersionView]
    recent: list[MatchRow]
    slowest: list[Slow]
    forfeits: list[ForfeitView] = field(default_factory=list)

    def to_json(self, *, private: bool) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "name": self.name,
            "owner": self.owner,
            "removed": self.removed,
            "versions": [v.to_json(private=private) for v in self.versions],
            "recent_matches": [m.to_json() for m in self.recent],
            "slowest_decisions": [s.__dict__ for s in self.slowest],
            "forfeits": [
                {**f.__dict__, "evidence": f.evidence if private else _public(f.evidence)}
                for f in self.forfeits
            ],
        }

    def public(self, keep: Keep) -> BotPage:
        """The page without the stderr lines of the bots ``keep`` refuses (in its own reasons and
        forfeit details, and in the seats of the matches it lists): what others may see."""
        mine = keep(self.name)
        versions = [
            v if mine else replace(v, reason=public_reason(v.reason), stderr_tail=None) for v in self.versions
        ]
        versions = [replace(v, validation=[public_row(m, keep) for m in v.validation]) for v in versions]
        forfeits = [
            f
            if mine
            else replace(f, detail=public_detail(f.termination, f.detail), evidence=_public(f.evidence))
            for f in self.forfeits
        ]
        return replace(
            self, versions=versions, forfeits=forfeits, recent=[public_row(m, keep) for m in self.recent]
        )


def _public(evidence: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in evidence.items() if k != "stderr_tail"}


def bot_page(db: Database, name: str) -> BotPage:
    """The page of bot ``name``; :class:`NoSuchBotError` when there is none."""
    with db.session() as session:
        bot = session.exec(select(Bot).where(Bot.name == name)).first()
        if bot is None or bot.id is None or name.startswith("file:"):
            raise NoSuchBotError(f"there is no bot named {name!r}")
        owner_row = session.get(BotOwner, bot.id)
        owner = session.get(UserAccount, owner_row.user_id) if owner_row is not None else None
        versions = list(
            session.exec(
                select(BotVersion).where(BotVersion.bot_id == bot.id).order_by(col(BotVersion.version).desc())
            ).all()
        )
        vids = [v.id for v in versions if v.id is not None]
        uploads = {
            u.bot_version_id: u
            for u in session.exec(select(BotUpload).where(col(BotUpload.bot_version_id).in_(vids))).all()
        }
        number = {v.id: v.version for v in versions}
        slow_rows = session.exec(
            select(MatchSeat)
            .where(col(MatchSeat.bot_version_id).in_(vids), col(MatchSeat.think_max).is_not(None))
            .order_by(col(MatchSeat.think_max).desc())
            .limit(SLOWEST)
        ).all()
        slowest = [
            Slow(s.match_id, number[s.bot_version_id], s.think_max or 0.0, s.decisions) for s in slow_rows
        ]
        seat_rows = session.exec(  # the forfeits only, newest first (a ladder bot has 10,000s of seats)
            select(MatchSeat, Match)
            .join(Match, col(Match.id) == col(MatchSeat.match_id))
            .where(col(MatchSeat.bot_version_id).in_(vids), col(MatchSeat.termination).in_(list(Reason)))
            .order_by(col(Match.id).desc())
            .limit(FORFEITS)
        ).all()
        forfeited = [(s, m) for s, m in seat_rows if is_forfeit(s.termination)]
    views = []
    for v in versions:
        assert v.id is not None
        up = uploads.get(v.id)
        validation = [m for m in (queries.get_match(db, i) for i in (match_ids(up) if up else [])) if m]
        views.append(
            VersionView(
                v.id,
                v.version,
                v.filename,
                v.sha256,
                v.created_at,
                up.status if up else UploadStatus.ACTIVE,
                up is not None,
                bool(up and up.keep_previous),
                up.reason if up else None,
                up.stderr_tail if up else None,
                validation,
            )
        )
    forfeits = [
        ForfeitView(
            m.id or 0,
            number[s.bot_version_id],
            s.termination or "",
            s.detail,
            _evidence(db, m.id or 0, s.seat),
        )
        for s, m in forfeited
    ]
    try:
        recent = queries.list_matches(db, MatchFilters(bot=name, status=None), per_page=RECENT).items
    except queries.FilterError:
        recent = []
    return BotPage(
        bot.id,
        bot.name,
        owner.username if owner else None,
        owner.id if owner else None,
        bot.removed_at is not None,
        views,
        recent,
        slowest,
        forfeits,
    )


def _evidence(db: Database, match_id: int, seat: int) -> dict[str, Any]:
    """The forfeit evidence of ``seat`` in the match's replay (empty when there is none)."""
    try:
        text = load_replay(db, match_id)
    except (UnknownMatchError, CorruptReplayError):
        return {}
    for line in reversed(text.splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        for f in obj.get("forfeits", []) if isinstance(obj, dict) else []:
            if isinstance(f, dict) and f.get("seat") == seat:
                ev = f.get("evidence", {})
                return ev if isinstance(ev, dict) else {}
    return {}


@dataclass(frozen=True)
class BotListing:
    """One line of ``/bots``: an active bot, its owner and its newest version's status."""

    name: str
    owner: str | None  # None: registered from the CLI (the arena's admins')
    version: int  # the newest version
    status: str  # that version's status ("active" for a CLI-registered version)
    created_at: datetime


def bot_index(db: Database) -> list[BotListing]:
    """Every bot that has a version and is not removed (nor an ad-hoc ``file:`` bot nor a person
    of ``arena play``: what ``arena bots list`` lists), by name, with its owner and its newest
    version's status: two queries in all, however many bots there are."""
    with db.session() as session:
        bots = session.exec(
            select(Bot, UserAccount.username)
            .outerjoin(BotOwner, col(BotOwner.bot_id) == col(Bot.id))
            .outerjoin(UserAccount, col(UserAccount.id) == col(BotOwner.user_id))
            .where(col(Bot.removed_at).is_(None))
            .where(col(Bot.name).not_like(f"{FILE_PREFIX}%"), col(Bot.name).not_like(f"{HUMAN_PREFIX}%"))
            .order_by(col(Bot.name))
        ).all()
        newest = (
            select(BotVersion.bot_id, func.max(BotVersion.version).label("top"))
            .group_by(col(BotVersion.bot_id))
            .subquery()
        )
        versions = session.exec(
            select(BotVersion.bot_id, BotVersion.version, BotUpload.status)
            .join(
                newest,
                (newest.c.bot_id == col(BotVersion.bot_id)) & (newest.c.top == col(BotVersion.version)),
            )
            .outerjoin(BotUpload, col(BotUpload.bot_version_id) == col(BotVersion.id))
        ).all()
    top = {bot_id: (version, status or UploadStatus.ACTIVE) for bot_id, version, status in versions}
    listed = [
        BotListing(bot.name, owner, *top[bot.id], bot.created_at) for bot, owner in bots if bot.id in top
    ]
    return sorted(listed, key=lambda b: b.name)  # code point order: not the PostgreSQL database's collation
