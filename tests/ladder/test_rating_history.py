"""A version's rating history (the web's ``/bots/NAME/charts``) reads on both backends: its
hand-written query named the column ``placing`` bare, a reserved word in PostgreSQL, so the
query was a syntax error there (the page answered 500) while SQLite took it."""

from __future__ import annotations

from pathlib import Path

from store.helpers import bot_copy

from arena.ladder.field import ensure_ladder
from arena.ladder.ratings import HistoryPoint, rating_history
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match
from arena.store.models_ladder import LadderRatingHistory


def test_rating_history_reads_on_every_backend(db: Database, tmp_path: Path) -> None:
    ladder = ensure_ladder(db)
    version = add_bot(db, "charted", bot_copy(tmp_path, "charted"))
    with db.session() as session:
        match = Match(tournament_id=ladder.id, ordinal=0, seed=1, status="finished")
        session.add(match)
        session.flush()
        assert match.id is not None and version.id is not None
        session.add(
            LadderRatingHistory(
                tournament_id=ladder.id or 0, match_id=match.id, bot_version_id=version.id,
                mu=26.0, sigma=8.0, games=1, placing=1,
            )
        )  # fmt: skip
    assert rating_history(db, [version.id or 0]) == [HistoryPoint(match.id, 26.0, 8.0, 1, 1)]
    assert rating_history(db, []) == []
