"""Finished results as inputs for ratings and leaderboards (read-only queries)."""

from __future__ import annotations

from dataclasses import dataclass, field

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

    @property
    def mean_score(self) -> float:
        """Average points per game."""
        return self.score_total / self.games if self.games else 0.0


def _finished(db: Database, tournament_id: int | None) -> tuple[list[Match], dict[int, list[MatchSeat]]]:
    with db.session() as session:
        query = select(Match).where(Match.status == MatchStatus.FINISHED)
        if tournament_id is not None:
            # schedule order: the same for every run of the tournament, however many in parallel
            query = query.where(Match.tournament_id == tournament_id)
            query = query.order_by(col(Match.ordinal), col(Match.id))
        else:  # stand-alone matches ('arena match': no tournament) are not rated
            query = query.where(col(Match.tournament_id).is_not(None))
            query = query.order_by(col(Match.finished_at), col(Match.id))
        matches = list(session.exec(query).all())
        ids = [m.id for m in matches]
        seats: dict[int, list[MatchSeat]] = {}
        for chunk in range(0, len(ids), 500):
            part = ids[chunk : chunk + 500]
            for s in session.exec(
                select(MatchSeat).where(col(MatchSeat.match_id).in_(part)).order_by(col(MatchSeat.seat))
            ).all():
                seats.setdefault(s.match_id, []).append(s)
        return matches, seats


def game_results(db: Database, tournament_id: int | None = None) -> list[GameResult]:
    """Every finished match (of one tournament, or all) as a rating input: a tournament's in
    schedule order (so a rerun of it rates the same sequence, whatever finished first), all
    matches in finishing order.

    Players are bot-version display names; the duplicate-dice group is the match's table and seed.
    """
    matches, seats = _finished(db, tournament_id)
    names = version_names(db, sorted({s.bot_version_id for ss in seats.values() for s in ss}))
    out = []
    for m in matches:
        assert m.id is not None
        ss = seats.get(m.id, [])
        if len(ss) < 2 or any(s.placing is None for s in ss):
            continue
        out.append(
            GameResult(
                players=tuple(names[s.bot_version_id] for s in ss),
                placings=tuple(int(s.placing or 0) for s in ss),
                scores=tuple(float(s.score or 0) for s in ss),
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


def bot_stats(db: Database, tournament_id: int | None = None) -> dict[str, BotStats]:
    """Per bot version display name: the counts a leaderboard shows."""
    _, seats = _finished(db, tournament_id)
    ids = sorted({s.bot_version_id for ss in seats.values() for s in ss})
    names = version_names(db, ids)
    removed = _removed_versions(db, ids)
    stats: dict[str, BotStats] = {}
    for ss in seats.values():
        placings = [s.placing for s in ss]
        for k, s in enumerate(ss):
            name = names[s.bot_version_id]
            st = stats.setdefault(name, BotStats(name, removed=s.bot_version_id in removed))
            st.games += 1
            st.wins += win_share(placings, k)
            st.score_total += s.score or 0
            st.think_total += s.think_total or 0.0
            st.decisions += s.decisions or 0
            if is_forfeit(s.termination):  # an unknown value raises: it is never silently dropped
                reason = parse_ending(s.termination or "")
                st.forfeits += 1
                st.by_reason[reason] = st.by_reason.get(reason, 0) + 1
                st.timeouts += reason is Reason.TIMEOUT
    return stats
