"""arena.store.retry: a short database operation run again after a transient failure, and the
end of a tournament run that reads its table through it (no traceback when the database fails)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from sqlalchemy.exc import IntegrityError, OperationalError

from arena.cli import tournament_cmd
from arena.store.db import Database
from arena.store.retry import retried, transient


class Flaky:
    """Fails with the given errors, in order, then returns 42."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return 42


def dropped() -> OperationalError:
    return OperationalError("SELECT 1", {}, Exception("terminating connection due to administrator command"))


def test_a_transient_failure_is_tried_again() -> None:
    op = Flaky(dropped(), dropped())
    assert retried(op, pause=0) == 42
    assert op.calls == 3


def test_the_last_transient_failure_propagates() -> None:
    op = Flaky(dropped(), dropped(), dropped())
    with pytest.raises(OperationalError):
        retried(op, pause=0)
    assert op.calls == 3


def test_other_failures_propagate_at_once() -> None:
    op = Flaky(IntegrityError("INSERT", {}, Exception("duplicate key")))
    with pytest.raises(IntegrityError):
        retried(op, pause=0)
    assert op.calls == 1
    op2 = Flaky(ValueError("not a database error"))
    with pytest.raises(ValueError):
        retried(op2, pause=0)
    assert op2.calls == 1


def test_transient_classification() -> None:
    assert transient(dropped())
    assert not transient(IntegrityError("INSERT", {}, Exception("duplicate key")))
    invalidated = IntegrityError("INSERT", {}, Exception("x"), connection_invalidated=True)
    assert transient(invalidated)


def test_the_final_table_is_read_again_then_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``arena tournament start/run/resume`` end by reading the leaderboard: a dropped connection
    there is read again; one that stays down ends in ``error: ...`` naming the resume command,
    exit 1, no traceback (the matches are already stored)."""
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    monkeypatch.setattr("arena.store.retry.time.sleep", lambda s: None)
    flaky = Flaky(dropped())
    monkeypatch.setattr(tournament_cmd, "leaderboard", lambda *a, **k: [flaky()][:0])
    monkeypatch.setattr(tournament_cmd, "status_counts", lambda db, tid: {"finished": 3})
    counts, rows = tournament_cmd._final_table(db, 7)
    assert counts == {"finished": 3} and rows == [] and flaky.calls == 2

    def down(*args: object, **kwargs: object) -> list[object]:
        raise dropped()

    monkeypatch.setattr(tournament_cmd, "leaderboard", down)
    with pytest.raises(typer.Exit) as exit_info:
        tournament_cmd._final_table(db, 7)
    assert exit_info.value.exit_code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: tournament 7: its matches are stored")
    assert "administrator command" in err and "'arena tournament resume 7'" in err
    assert "Traceback" not in err
    db.close()
