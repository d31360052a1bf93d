"""Asking the ladder format for its next table, without loading 100,000 matches.

:func:`pull_ladder` is the ladder's ``puller`` for :func:`arena.tournament.runner.coordinate`:
it reads the active set (:func:`arena.ladder.field.active_versions`) and appends newcomers to
the field, then gives the format (:class:`arena.tournament.formats.ladder.Ladder`) what it needs
as options: the active entries, the incremental ratings (``ladder_rating``) and the history's
:class:`~arena.tournament.formats.ladder.Summary` from a few aggregate queries.  The answer is
stored like any format's (:func:`arena.store.tournaments.append_matches`, guarded by the number
of matches the format was shown, so one answer is never stored twice).

The per-run options (:data:`arena.ladder.field.RUN_OPTIONS`: ``max_tables``, ``inflight``) are
the run's, given here; stored ones (an earlier version stored ``max_tables``) are ignored.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import func, text
from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import Match, MatchSeat, MatchStatus
from arena.store.models_ladder import LadderRating
from arena.store.tournaments import MatchTask, append_matches, get_tournament, queued_tasks
from arena.tournament.formats import Finished, History, Next, Play
from arena.tournament.formats.ladder import Ladder, Summary
from arena.tournament.pull import settings_of

from .field import RUN_OPTIONS, active_versions, sync_field

OPEN = (MatchStatus.QUEUED, MatchStatus.RUNNING)
AHEAD = 4
"""Tables stored per question at most (the format stops at its ``inflight`` limit first)."""


def summary_of(db: Database, tournament_id: int, entry: dict[int, int]) -> tuple[Summary, int]:
    """The ladder history's :class:`Summary` (entries, not versions) and its match count, from
    indexed lookups only (each version's newest ladder match; the few open matches by the status
    index), so it costs the same with 100,000 stored matches."""
    with db.session() as session:
        count, top = session.exec(
            select(func.count(), func.max(Match.ordinal)).where(Match.tournament_id == tournament_id)
        ).one()
        tables = 0
        if top is not None:
            last_round = session.exec(
                select(Match.round).where(Match.tournament_id == tournament_id, Match.ordinal == top)
            ).one()
            tables = int(last_round) + 1
        last: dict[int, int] = {}
        newest = text(  # a version's newest ladder match: the version-then-match index, newest first
            'SELECT m.round FROM matchseat ms JOIN "match" m ON m.id = ms.match_id '
            "WHERE ms.bot_version_id = :v AND m.tournament_id = :t ORDER BY ms.match_id DESC LIMIT 1"
        )
        conn = session.connection()
        for vid in entry:
            r = conn.execute(newest, {"v": vid, "t": tournament_id}).scalar()
            if r is not None:
                last[vid] = int(r)
        open_ids = select(Match.id).where(col(Match.status).in_(OPEN))
        rows = session.exec(
            select(MatchSeat.bot_version_id, Match.group_key)
            .join(Match, col(Match.id) == col(MatchSeat.match_id))
            .where(col(Match.id).in_(open_ids), Match.tournament_id == tournament_id)
        ).all()
    busy: dict[int, int] = {}
    for vid, _group in rows:
        busy[vid] = busy.get(vid, 0) + 1
    summary = Summary(
        tables=tables,
        open_groups=len({group for _vid, group in rows}),
        last={entry[v]: r for v, r in last.items() if v in entry},
        busy={entry[v]: n for v, n in busy.items() if v in entry},
    )
    return summary, int(count or 0)


def tables_of(db: Database, tournament_id: int) -> int:
    """How many tables the ladder has handed out (its newest match's table number, plus one)."""
    with db.session() as session:
        top = session.exec(select(func.max(Match.ordinal)).where(Match.tournament_id == tournament_id)).one()
        if top is None:
            return 0
        return (
            int(
                session.exec(
                    select(Match.round).where(Match.tournament_id == tournament_id, Match.ordinal == top)
                ).one()
            )
            + 1
        )


def ask(
    db: Database, tournament_id: int, *, max_tables: int | None = None, inflight: int | None = None
) -> tuple[Ladder, Next, list[int], int]:
    """The ladder format as it stands, its answer, the field and the matches it was shown;
    ``max_tables`` (the tables handed out in all, after which it is finished) and ``inflight``
    are the run's format options (stored ones are ignored)."""
    t = get_tournament(db, tournament_id)
    now_active = active_versions(db)
    field = sync_field(db, tournament_id, now_active)
    entry = {vid: i for i, vid in enumerate(field)}
    active = sorted(entry[v] for v in now_active if v in entry)
    summary, seen = summary_of(db, tournament_id, entry)
    with db.session() as session:
        rated = {
            entry[r.bot_version_id]: [r.mu, r.sigma, float(r.games)]
            for r in session.exec(
                select(LadderRating).where(LadderRating.tournament_id == tournament_id)
            ).all()
            if r.bot_version_id in entry
        }
    base = settings_of(t, len(field))
    stored = {k: v for k, v in base.options.items() if k not in RUN_OPTIONS}
    run = {k: v for k, v in (("max_tables", max_tables), ("inflight", inflight)) if v is not None}
    options = {**stored, **run, "active": active, "ratings": {str(e): v for e, v in rated.items()},
               "summary": summary.to_json()}  # fmt: skip
    fmt = Ladder(replace(base, options=options))
    return fmt, fmt.next(History()), field, seen


def pull_ladder(
    db: Database,
    tournament_id: int,
    most: int = AHEAD,
    *,
    max_tables: int | None = None,
    inflight: int | None = None,
) -> list[MatchTask] | None:
    """Store the ladder's next tables, as many as it hands out now (up to ``most``, each asked
    with the previous one stored: a worker that frees up finds a match queued); return the
    queued matches, or None when the ladder has handed out ``max_tables`` tables in all and
    none is left open (without ``max_tables`` it never ends).  See :func:`ask`."""
    for _ in range(most):
        _, answer, field, seen = ask(db, tournament_id, max_tables=max_tables, inflight=inflight)
        if isinstance(answer, Finished):
            return queued_tasks(db, tournament_id) or None
        if not isinstance(answer, Play):
            break
        matches = [(p.round, p.seed, p.group, tuple(field[e] for e in p.seating)) for p in answer.pairings]
        if not append_matches(db, tournament_id, seen=seen, matches=matches):
            break
    return queued_tasks(db, tournament_id)
