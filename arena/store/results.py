"""Finished results as inputs for ratings and leaderboards (read-only queries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import select as sa_select
from sqlmodel import col, select

from arena.endings import Reason, is_forfeit, parse_ending, win_share
from arena.ratings.results import GameResult

from .bots import version_names
from .db import Database
from .models import Bot, BotVersion, Match, MatchSeat, MatchStatus


@dataclass
class BotStats:
    """Per bot version: games, wins (:func:`arena.endings.win_share`: 1 alone in first place, 1/k
    for a first place shared by k seats), mean score, forfeits (in all and ``by_reason``), and
    whether its bot has been removed from the registry (``arena bots remove``)."""

    name: str
    games: int = 0
    wins: float = 0.0
    score_total: int = 0
    timeouts: int = 0
    forfeits: int = 0
    think_total: float = 0.0
    decisions: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)
    removed: bool = False
    ahead: bool = False  # in some game it placed above another seat, or shared a place with one
    behind: bool = False  # in some game another seat placed above it, or shared its place

    @property
    def one_sided(self) -> bool:
        """Every game won outright, or every game behind every other seat: nothing bounds its
        rating from that side but the rating's prior, so its interval measures nothing."""
        return self.games > 0 and not (self.ahead and self.behind)

    @property
    def mean_score(self) -> float:
        """Average points per game."""
        return self.score_total / self.games if self.games else 0.0


class SeatRow(NamedTuple):
    """One seat of a finished match, as the ratings and the statistics read it (a named tuple:
    made straight from a database row, 40,000 of them for 10,000 matches)."""

    seat: int
    bot_version_id: int
    score: int | None
    placing: int | None
    termination: str | None
    think_total: float | None
    decisions: int | None


@dataclass(frozen=True)
class FinishedMatch:
    """A finished match with its seats (in seat order)."""

    id: int
    tournament_id: int | None
    group_key: str
    seats: tuple[SeatRow, ...]


def finished_matches(db: Database, tournament_id: int | None = None) -> list[FinishedMatch]:
    """Every finished match (of one tournament, or all tournaments' but not stand-alone ones) with
    its seats, in the order :func:`game_results` rates them: a tournament's in schedule order, all
    matches in finishing order.  One query over plain columns (no model objects: over 10,000
    matches the objects cost seconds), read once by :func:`game_results` and :func:`bot_stats`."""
    columns: list[Any] = [
        Match.id, Match.tournament_id, Match.group_key, MatchSeat.seat, MatchSeat.bot_version_id,
        MatchSeat.score, MatchSeat.placing, MatchSeat.termination, MatchSeat.think_total, MatchSeat.decisions,
    ]  # fmt: skip
    query = (
        sa_select(*columns)
        .join(MatchSeat, col(MatchSeat.match_id) == col(Match.id))
        .where(col(Match.status) == MatchStatus.FINISHED)
    )  # fmt: skip
    if tournament_id is not None:
        # schedule order: the same for every run of the tournament, however many in parallel
        query = query.where(col(Match.tournament_id) == tournament_id)
        query = query.order_by(col(Match.ordinal), col(Match.id), col(MatchSeat.seat))
    else:  # stand-alone matches ('arena match': no tournament) are not rated
        query = query.where(col(Match.tournament_id).is_not(None))
        query = query.order_by(col(Match.finished_at), col(Match.id), col(MatchSeat.seat))
    out: list[FinishedMatch] = []
    with db.session() as session:
        current: int | None = None
        seats: list[SeatRow] = []
        head: tuple[int | None, str] = (None, "")
        make = tuple.__new__  # SeatRow(*row) costs a call through its Python __new__: 30,000 rows
        for row in session.connection().execute(query).all():
            mid = row[0]
            if mid != current:
                if current is not None:
                    out.append(FinishedMatch(current, head[0], head[1], tuple(seats)))
                current, head, seats = mid, (row[1], row[2]), []
            seats.append(make(SeatRow, row[3:]))
        if current is not None:
            out.append(FinishedMatch(current, head[0], head[1], tuple(seats)))
    return out


def _names(db: Database, matches: list[FinishedMatch]) -> dict[int, str]:
    return version_names(db, sorted({s.bot_version_id for m in matches for s in m.seats}))


def game_results(
    db: Database, tournament_id: int | None = None, *, matches: list[FinishedMatch] | None = None
) -> list[GameResult]:
    """Every finished match (of one tournament, or all) as a rating input: a tournament's in
    schedule order (so a rerun of it rates the same sequence, whatever finished first), all
    matches in finishing order.  ``matches``: what :func:`finished_matches` returned (read once
    for several uses), else it is read here.

    Players are bot-version display names; the duplicate-dice group is the match's table and seed.
    """
    if matches is None:
        matches = finished_matches(db, tournament_id)
    names = _names(db, matches)
    out = []
    for m in matches:
        ss = m.seats
        placings = tuple([s.placing for s in ss])
        if len(ss) < 2 or None in placings:
            continue
        out.append(
            GameResult(
                players=tuple([names[s.bot_version_id] for s in ss]),
                placings=tuple([int(p or 0) for p in placings]),
                scores=tuple([float(s.score or 0) for s in ss]),
                game_id=str(m.id),
                group=f"{m.tournament_id}:{m.group_key}",
            )
        )
    return out


def _removed_versions(db: Database, version_ids: list[int]) -> set[int]:
    """The versions among ``version_ids`` whose bot has been removed."""
    with db.session() as session:
        found: set[int] = set()
        for chunk in range(0, len(version_ids), 500):
            part = version_ids[chunk : chunk + 500]
            found.update(
                vid
                for vid in session.exec(
                    select(BotVersion.id)
                    .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
                    .where(col(BotVersion.id).in_(part), col(Bot.removed_at).is_not(None))
                ).all()
                if vid is not None
            )
        return found


def bot_stats(
    db: Database, tournament_id: int | None = None, *, matches: list[FinishedMatch] | None = None
) -> dict[str, BotStats]:
    """Per bot version display name: the counts a leaderboard shows (``matches`` as for
    :func:`game_results`)."""
    if matches is None:
        matches = finished_matches(db, tournament_id)
    ids = sorted({s.bot_version_id for m in matches for s in m.seats})
    names = version_names(db, ids)
    removed = _removed_versions(db, ids)
    stats: dict[str, BotStats] = {}
    forfeit: dict[str | None, bool] = {}  # is_forfeit per distinct termination (30,000 seats, ~10 values)
    for ss in (m.seats for m in matches):
        placings = [s.placing for s in ss]
        placed = [p for p in placings if p is not None]
        last = max(placed) if len(placed) == len(placings) else None  # None: a seat not placed
        for k, s in enumerate(ss):
            name = names[s.bot_version_id]
            st = stats.get(name)
            if st is None:
                st = stats[name] = BotStats(name, removed=s.bot_version_id in removed)
            st.games += 1
            st.score_total += s.score or 0
            st.think_total += s.think_total or 0.0
            st.decisions += s.decisions or 0
            lost = forfeit.get(s.termination)
            if lost is None:
                lost = forfeit[s.termination] = is_forfeit(s.termination)  # an unknown value raises
            if placings[k] == 1:
                st.wins += win_share(placings, k, forfeited=lost)
            mine = placings[k]
            if mine is not None and last is not None:
                shared = placed.count(mine) > 1
                st.ahead = st.ahead or shared or last > mine
                st.behind = st.behind or shared or mine > 1
            if lost:
                reason = parse_ending(s.termination or "")
                st.forfeits += 1
                st.by_reason[reason] = st.by_reason.get(reason, 0) + 1
                st.timeouts += reason is Reason.TIMEOUT
    return stats


def first_forfeits(db: Database, tournament_id: int) -> dict[str, tuple[int, str]]:
    """Per bot version display name, of the tournament's finished matches: the match id and the
    recorded detail (the referee's words, e.g. the bot's last stderr line) of its first forfeit.
    Versions that never forfeited are absent."""
    columns: list[Any] = [
        MatchSeat.bot_version_id,
        MatchSeat.match_id,
        MatchSeat.termination,
        MatchSeat.detail,
    ]
    query = (
        sa_select(*columns)
        .join(Match, col(MatchSeat.match_id) == col(Match.id))
        .where(col(Match.tournament_id) == tournament_id, col(Match.status) == MatchStatus.FINISHED)
        .order_by(col(MatchSeat.match_id), col(MatchSeat.seat))
    )  # fmt: skip
    first: dict[int, tuple[int, str]] = {}
    with db.session() as session:
        for vid, mid, termination, detail in session.connection().execute(query).all():
            if vid not in first and is_forfeit(termination):
                first[vid] = (int(mid), f"{termination}: {detail}" if detail else str(termination))
    names = version_names(db, sorted(first))
    return {names[v]: found for v, found in first.items()}
