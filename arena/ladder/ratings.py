"""The ladder's ratings in the store: updated in each result's transaction, history, cached fit.

- :func:`rate_in_session` folds one finished match into ``ladder_rating`` and appends its
  ``ladder_rating_history`` rows, inside the transaction that records the result
  (:func:`record_rated`), so a coordinator killed with kill -9 leaves the ratings exactly the
  fold of the recorded results: a result is never rated twice (it is recorded once, and history
  rows are unique per match and version) nor lost (rated with it or not recorded at all).
- :func:`fit_state` / :func:`refit`: the published table's Plackett-Luce fit, cached in
  ``ladder_fit`` with the ``stamp`` it was computed at (the highest rating-history id).  A new
  rated result raises the current stamp, so the cache is stale exactly when some result came in
  after the fit; readers show the cached fit and say whether it is current.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, text
from sqlmodel import Session, col, select

from arena.ratings import fit_plackett_luce
from arena.ratings.incremental import Belief, apply
from arena.ratings.results import GameResult
from arena.referee import MatchResult
from arena.store.db import Database
from arena.store.models import Match, MatchSeat, MatchStatus, utcnow
from arena.store.models_ladder import LadderFit, LadderRating, LadderRatingHistory
from arena.store.tournaments import record_result, record_results

FIT_RESAMPLES = 20
"""Bootstrap replicates of the published table's fit (its 95% interval)."""


def rate_in_session(session: Session, match: Match) -> bool:
    """Fold the finished ``match`` into its ladder's ratings (in ``session``'s transaction);
    False when it has no complete placings (nothing rated)."""
    assert match.id is not None and match.tournament_id is not None
    seats = session.exec(
        select(MatchSeat).where(MatchSeat.match_id == match.id).order_by(col(MatchSeat.seat))
    ).all()
    if len(seats) < 2 or any(s.placing is None for s in seats):
        return False
    vids = [s.bot_version_id for s in seats]
    rows = {
        r.bot_version_id: r
        for r in session.exec(
            select(LadderRating)
            .where(
                LadderRating.tournament_id == match.tournament_id,
                col(LadderRating.bot_version_id).in_(vids),
            )
            .with_for_update()
        ).all()
    }
    current = {v: Belief(r.mu, r.sigma, r.games) for v, r in rows.items()}
    placings = [int(s.placing or 0) for s in seats]
    after = apply(current, vids, placings)
    at = match.finished_at or utcnow()
    for seat, vid in enumerate(vids):
        b = after[vid]
        row = rows.get(vid) or LadderRating(
            tournament_id=match.tournament_id, bot_version_id=vid, mu=0, sigma=0
        )
        row.mu, row.sigma, row.games, row.last_match_id, row.updated_at = (
            b.mu,
            b.sigma,
            b.games,
            match.id,
            at,
        )
        session.add(row)
        session.add(
            LadderRatingHistory(
                tournament_id=match.tournament_id, match_id=match.id, bot_version_id=vid,
                mu=b.mu, sigma=b.sigma, games=b.games, placing=placings[seat], at=at,
            )
        )  # fmt: skip
    session.flush()
    return True


def _rate(session: Session, match: Match) -> None:
    rate_in_session(session, match)


def record_rated(db: Database, match_id: int, result: MatchResult) -> bool:
    """Record a ladder match's result and update its ratings, one transaction (the ladder's
    recorder for :func:`arena.tournament.runner.coordinate`); False for a duplicate result."""
    return record_result(db, match_id, result, after=_rate)


def record_rated_batch(db: Database, items: Sequence[tuple[int, MatchResult]]) -> list[bool]:
    """Record a batch of ladder results and update the ratings match by match, all in one
    transaction (the ladder's batch recorder for :func:`arena.tournament.runner.coordinate`)."""
    return record_results(db, items, after=_rate)


def beliefs(db: Database, tournament_id: int) -> dict[int, Belief]:
    """Every rated version's current belief (version id -> belief)."""
    with db.session() as session:
        return {
            r.bot_version_id: Belief(r.mu, r.sigma, r.games)
            for r in session.exec(
                select(LadderRating).where(LadderRating.tournament_id == tournament_id)
            ).all()
        }


@dataclass(frozen=True)
class HistoryPoint:
    """A version's belief right after one match."""

    match_id: int
    mu: float
    sigma: float
    games: int
    placing: int


def rating_history(db: Database, version_ids: Iterable[int], limit: int = 500) -> list[HistoryPoint]:
    """The versions' beliefs after each of their last ``limit`` rated matches, oldest first.

    ``placing`` is quoted: a reserved word in PostgreSQL, where the bare name was a syntax error
    (the web's ``/bots/NAME/charts`` answered 500; SQLite took it)."""
    ids = [int(v) for v in version_ids]
    query = text(
        'SELECT match_id, mu, sigma, games, "placing" FROM ladder_rating_history '
        f"WHERE bot_version_id IN ({', '.join(str(v) for v in ids) or 'NULL'}) ORDER BY id DESC LIMIT :n"
    )
    with db.engine.connect() as conn:
        rows = conn.execute(query, {"n": limit}).all()
    return [HistoryPoint(int(m), float(mu), float(sg), int(g), int(p)) for m, mu, sg, g, p in reversed(rows)]


def _utc(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def stamp(db: Database, tournament_id: int) -> int:
    """The ladder's rating stamp: the highest rating-history id (0 before any rated result)."""
    with db.session() as session:
        value = session.exec(
            select(func.max(LadderRatingHistory.id)).where(LadderRatingHistory.tournament_id == tournament_id)
        ).one()
        return int(value or 0)


@dataclass(frozen=True)
class FitState:
    """The cached fit (version id -> (rating, lo, hi, games); empty before the first fit) and
    whether it is current (no result rated since)."""

    ratings: dict[int, tuple[float, float | None, float | None, int]]
    fresh: bool
    stamp: int
    matches: int


def fit_state(db: Database, tournament_id: int) -> FitState:
    """The cached Plackett-Luce table and whether it is still current."""
    now = stamp(db, tournament_id)
    with db.session() as session:
        row = session.get(LadderFit, tournament_id)
        if row is None:
            return FitState({}, now == 0, 0, 0)
        data = json.loads(row.data)
        ratings = {
            int(v): (float(r), _num(lo), _num(hi), int(n)) for v, (r, lo, hi, n) in data["ratings"].items()
        }
        return FitState(ratings, row.stamp == now, row.stamp, int(data.get("matches", 0)))


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def ladder_results(db: Database, tournament_id: int) -> list[GameResult]:
    """The ladder's finished matches as rating inputs (players are version ids as text)."""
    with db.session() as session:
        rows = session.exec(
            select(MatchSeat, Match.group_key)
            .join(Match, col(Match.id) == col(MatchSeat.match_id))
            .where(Match.tournament_id == tournament_id, Match.status == MatchStatus.FINISHED)
            .order_by(col(MatchSeat.match_id), col(MatchSeat.seat))
        ).all()
        games: dict[int, list[tuple[int, int | None, int | None, str]]] = {}
        for seat, group in rows:
            games.setdefault(seat.match_id, []).append((seat.bot_version_id, seat.placing, seat.score, group))
    out = []
    for mid, seats in games.items():
        if len(seats) < 2 or any(p is None for _, p, _, _ in seats):
            continue
        out.append(
            GameResult(
                players=tuple(str(v) for v, _, _, _ in seats),
                placings=tuple(int(p or 0) for _, p, _, _ in seats),
                scores=tuple(float(s or 0) for _, _, s, _ in seats),
                game_id=str(mid),
                group=seats[0][3],
            )
        )
    return out


def refit(db: Database, tournament_id: int, *, n_resamples: int = FIT_RESAMPLES) -> FitState:
    """Fit the published table to every finished ladder match and cache it with the stamp read
    *before* the results (a result recorded meanwhile leaves the cache stale: refitted next)."""
    at = stamp(db, tournament_id)
    results = ladder_results(db, tournament_id)
    ratings: dict[str, list[float | None]] = {}
    if results:
        fit = fit_plackett_luce(results, n_resamples=n_resamples)
        for bot, e in fit.ratings.items():
            ratings[bot] = [e.value, _num(e.lo), _num(e.hi), fit.games.get(bot, 0)]
    data = json.dumps({"ratings": ratings, "matches": len(results)})
    with db.session() as session:
        row = session.get(LadderFit, tournament_id, with_for_update=True)
        if row is None:
            row = LadderFit(tournament_id=tournament_id, stamp=at, data=data)
        if row.stamp <= at:  # else a later fit got there first: keep it
            row.stamp, row.data, row.computed_at = at, data, utcnow()
            session.add(row)
    return fit_state(db, tournament_id)
