"""A Swiss tournament on a real local Dask cluster pulls its rounds like a local run: the same
rounds, byes and results (the bot that sits out round 1 still gets its artifact sent)."""

from __future__ import annotations

from pathlib import Path

from distributed import Client
from sqlmodel import select

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import TournamentBye
from arena.tournament.cluster import run_tournament_on_cluster
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

from .helpers import BOTS, REPO, match_rows, outcome


def _swiss(db: Database) -> int:
    for name in BOTS:
        add_bot(db, name, REPO / "bots" / f"{name}_bot.py")
    t = create(db, list(BOTS), fmt="swiss", table_sizes=(2,), games=1, seed=5, rounds=3, move_time=2.0)
    assert t.id is not None
    return t.id


def _byes(db: Database, tid: int) -> list[tuple[int, int]]:
    with db.session() as session:
        rows = session.exec(select(TournamentBye).where(TournamentBye.tournament_id == tid)).all()
        return sorted((b.round, b.bot_version_id) for b in rows)


def test_swiss_on_the_cluster_matches_a_local_run(
    client: Client, db: Database, tmp_path: Path, worker_home: Path
) -> None:
    tid = _swiss(db)
    assert len(match_rows(db, tid)) == 2  # round 1 only: one table, two seat rotations
    run_tournament_on_cluster(db, tid, client)
    rows = match_rows(db, tid)
    assert len(rows) == 6 and all(r["status"] == "finished" for r in rows)
    assert [b[0] for b in _byes(db, tid)] == [1, 2, 3]  # three bots: one bye a round, each once
    assert len({b[1] for b in _byes(db, tid)}) == 3

    local = Database(f"sqlite:///{tmp_path / 'local.db'}")
    try:
        assert _swiss(local) == tid
        run_tournament(local, tid, jobs=2)
        assert outcome(match_rows(local, tid)) == outcome(rows)
        assert _byes(local, tid) == _byes(db, tid)
    finally:
        local.close()
