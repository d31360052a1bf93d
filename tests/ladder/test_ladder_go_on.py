"""The ladder's messages name the command that goes on with it, 'arena ladder run': they named
'arena tournament resume ID' (and '... --wait'), which refuses a ladder's tournament (an outside
reliability review: a second 'arena ladder run', and a PostgreSQL restart mid-run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from store.helpers import run_cli, sample

from arena.ladder import service
from arena.ladder.field import find_ladder
from arena.ladder.service import LadderSettings, play_ladder
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.lease import coordinator_lease
from arena.tournament.runner import TournamentError


def _ladder(url: str, home: Path) -> int:
    db = Database(url)
    try:
        for name in ("greedy", "random"):
            add_bot(db, name, sample(name))
    finally:
        db.close()
    run_cli(home, url, "ladder", "run", "--max-tables", "0", "--no-sandbox")
    db = Database(url)
    try:
        found = find_ladder(db)
        assert found is not None and found.id is not None
        return found.id
    finally:
        db.close()


def test_a_second_ladder_run_is_told_to_run_the_ladder_again(sqlite_url: str, arena_home: Path) -> None:
    tid = _ladder(sqlite_url, arena_home)
    db = Database(sqlite_url)
    try:
        with coordinator_lease(db, tid):  # this process runs the ladder now
            second = run_cli(
                arena_home, sqlite_url, "ladder", "run", "--stop-after", "1", "--no-sandbox", code=1
            )
    finally:
        db.close()
    assert "is being run by another coordinator" in second.stderr, second.stderr
    assert "Run 'arena ladder run' again once it has ended" in second.stderr, second.stderr
    assert "tournament resume" not in second.stderr, second.stderr


def test_a_database_failure_in_the_ladder_names_arena_ladder_run(
    sqlite_url: str, arena_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ladder(sqlite_url, arena_home)

    def lost(*_args: object) -> None:
        raise OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(service, "open_run", lost)
    db = Database(sqlite_url)
    try:
        with pytest.raises(TournamentError) as caught:
            play_ladder(db, LadderSettings(sandbox=None), jobs=1, refit_every=60)
    finally:
        db.close()
    message = str(caught.value)
    assert "the database failed" in message and "run 'arena ladder run'" in message, message
    assert "tournament resume" not in message, message
