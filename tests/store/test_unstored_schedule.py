"""A round robin whose schedule was never stored (its creation killed between the tournament's row
and its matches) is shown as such, with the command that stores and plays it: ``tournament
show`` said "18000 more in later rounds", which a round robin does not have (a PostgreSQL
review)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import delete
from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import Match, MatchSeat
from arena.tournament.service import create

from .helpers import cli_inproc


def test_a_round_robin_without_its_stored_schedule_says_how_to_store_it(
    db: Database, db_url: str, arena_home: Path
) -> None:
    t = create(db, ["random", "greedy", "invader"], table_sizes=(2, 3), games=2)
    with db.session() as session:  # as if killed before the schedule was written
        ids = select(Match.id).where(Match.tournament_id == t.id)
        session.execute(delete(MatchSeat).where(col(MatchSeat.match_id).in_(ids)))
        session.execute(delete(Match).where(col(Match.tournament_id) == t.id))
        session.commit()
    shown = cli_inproc(arena_home, db_url, "tournament", "show", str(t.id))
    planned = 3 * 2 * 2 + 1 * 2 * 3  # three 2-player tables and one 3-player table, 2 seeds each
    assert f"({planned} not stored yet, {planned} in all: 'arena tournament start {t.id}'" in shown.stdout
    assert "later rounds" not in shown.stdout
    cli_inproc(arena_home, db_url, "tournament", "start", str(t.id))
    done = cli_inproc(arena_home, db_url, "tournament", "show", str(t.id))
    assert f"matches {planned} finished\n" in done.stdout, done.stdout
