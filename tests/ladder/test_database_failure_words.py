"""A database failure while the ladder runs names the ladder and its own command: it said
"during tournament 7" (the ladder's tournament row, which no command takes) in a PostgreSQL
review's dropped-database run."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from arena.tournament.runner import TournamentError, database_failures


def test_the_ladder_is_named_and_a_tournament_keeps_its_id() -> None:
    lost = OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))
    failures = database_failures(7, "arena ladder run", what="the ladder")
    with pytest.raises(TournamentError) as ladder, failures:
        raise lost
    said = str(ladder.value)
    assert said.startswith("the database failed during the ladder: ") and "tournament 7" not in said, said
    assert "server closed the connection unexpectedly" in said and "run 'arena ladder run'" in said, said
    with pytest.raises(TournamentError) as tournament, database_failures(7, "arena tournament resume 7"):
        raise lost
    assert str(tournament.value).startswith("the database failed during tournament 7: "), tournament.value
