"""The ladder's standings as pages and commands show them, read in a few small queries.

Nothing here folds or fits results: the OpenSkill beliefs are the ``ladder_rating`` rows kept
current in each result's transaction, and the Plackett-Luce column is the cached fit
(:func:`arena.ladder.ratings.fit_state`, marked stale while a refit is due).  So the standings
cost the same with 100 or 100,000 stored matches (``benchmarks/ladder.py`` measures it).

- **Ranked by** OpenSkill's conservative ``mu - 3 sigma`` (:class:`arena.ratings.incremental.Belief`).
- **Provisional**: a version with fewer than ``min_games`` rated games is listed apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func
from sqlmodel import col, select

from arena.lifecycle import process_host
from arena.ratings.incremental import Belief, ranked
from arena.ratings.rating import shown_interval
from arena.store.bots import version_names
from arena.store.db import Database
from arena.store.lease import lease_holder
from arena.store.models import Match, MatchSeat, MatchStatus

from .field import active_versions, find_ladder
from .ratings import beliefs, fit_state

MIN_GAMES = 10
"""Rated games a version needs before it is ranked."""


@dataclass(frozen=True)
class BoardRow:
    """One version on the ladder."""

    rank: int | None  # None: provisional
    bot: str
    version_id: int
    mu: float
    sigma: float
    conservative: float
    games: int
    active: bool
    pl: tuple[float, float | None, float | None] | None  # cached fit: rating, 95% lo, hi (None:
    # not measurable, see arena.ratings.rating.shown_interval)

    @property
    def provisional(self) -> bool:
        return self.rank is None


@dataclass(frozen=True)
class Live:
    """A ladder match in progress."""

    match_id: int
    bots: tuple[str, ...]
    started_at: datetime | None


@dataclass(frozen=True)
class Board:
    """The ladder's standings, its matches in progress and how current the published fit is."""

    tournament_id: int
    rows: list[BoardRow]
    finished: int
    running: list[Live]
    fit_fresh: bool
    fit_matches: int
    min_games: int
    ladder_running: bool = False
    """Whether the ladder's coordinator (``arena serve`` or ``arena ladder run``) holds its lease
    now: its refitter brings a stale table up to date; nobody does while it is not running."""


def ladder_board(db: Database, *, min_games: int = MIN_GAMES) -> Board | None:
    """The ladder's :class:`Board`, or None when there is no ladder."""
    t = find_ladder(db)
    if t is None or t.id is None:
        return None
    tid = t.id
    current = beliefs(db, tid)
    fit = fit_state(db, tid)
    active = set(active_versions(db))
    running = running_matches(db, tid)
    names = version_names(db, sorted(set(current) | active))
    for vid in active:  # active but not rated yet: provisional at the prior
        current.setdefault(vid, Belief(25.0, 25.0 / 3.0, 0))
    top, provisional = ranked(current, min_games)
    rows = []
    for rank, vid in [*((i, v) for i, v in enumerate(top, 1)), *((None, v) for v in provisional)]:
        b = current[vid]
        pl = fit.ratings.get(vid)
        rows.append(
            BoardRow(rank, names.get(vid, f"version {vid}"), vid, b.mu, b.sigma, b.conservative, b.games,
                     vid in active, (pl[0], *shown_interval(pl[1], pl[2], 0)) if pl else None)
        )  # fmt: skip
    return Board(tid, rows, finished_count(db, tid), running, fit.fresh, fit.matches, min_games,
                 ladder_running(db, tid))  # fmt: skip


def ladder_running(db: Database, tournament_id: int) -> bool:
    """Whether a coordinator plays the ladder now (and so refits its table: the refitter runs
    exactly while the ladder's lease is held): its lease is held, not expired, and its holder,
    when on this host, still runs."""
    holder = lease_holder(db, tournament_id)
    return holder is not None and not holder.expired() and not holder.gone_from(process_host())


def finished_count(db: Database, tournament_id: int) -> int:
    """The ladder's finished matches without counting 100,000 rows: its ordinals are 0..n-1
    (a format's matches are appended in order), so all of them minus the few that are not
    finished (queued, running, failed: found by the status index)."""
    with db.session() as session:
        top = session.exec(select(func.max(Match.ordinal)).where(Match.tournament_id == tournament_id)).one()
        unfinished = select(Match.id).where(
            col(Match.status).in_([MatchStatus.QUEUED, MatchStatus.RUNNING, MatchStatus.FAILED])
        )
        other = session.exec(
            select(func.count()).where(col(Match.id).in_(unfinished), Match.tournament_id == tournament_id)
        ).one()
    return 0 if top is None else int(top) + 1 - int(other)


def running_matches(db: Database, tournament_id: int) -> list[Live]:
    """The ladder's matches being played now, oldest first."""
    with db.session() as session:
        matches = session.exec(
            select(Match)
            .where(Match.tournament_id == tournament_id, Match.status == MatchStatus.RUNNING)
            .order_by(col(Match.id))
        ).all()
        ids = [m.id for m in matches]
        seats: dict[int, list[int]] = {}
        for s in session.exec(
            select(MatchSeat).where(col(MatchSeat.match_id).in_(ids)).order_by(col(MatchSeat.seat))
        ).all():
            seats.setdefault(s.match_id, []).append(s.bot_version_id)
        started = {m.id: m.started_at for m in matches}
    names = version_names(db, sorted({v for vs in seats.values() for v in vs}))
    return [
        Live(mid, tuple(names.get(v, str(v)) for v in seats.get(mid, [])), _utc(started[mid]))
        for mid in ids
        if mid is not None
    ]


def _utc(at: datetime | None) -> datetime | None:
    return None if at is None else at if at.tzinfo is not None else at.replace(tzinfo=UTC)
