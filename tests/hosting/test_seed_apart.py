"""No two matches of one seed are in play at once, in a real tournament on two workers.

The seatings of a seed share their dice; two copies of one bot program, one in each seating,
could pass the throws from the one that is ahead to the other while both run: an outside review
showed a covert channel between two sandboxed bots through the machine's load (the
machine-wide CPU counters), and the two seatings of a group used to start at the same moment on
the two workers."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pytest
from sqlmodel import select

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

REPO = Path(__file__).resolve().parents[2]


def test_the_seatings_of_a_seed_are_played_one_after_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_HOME", str((tmp_path / "home").resolve()))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    db = Database()
    try:
        for name in ("greedy", "random", "invader"):
            add_bot(db, name, REPO / "bots" / f"{name}_bot.py")
        t = create(db, ["greedy", "random", "invader"], fmt="round-robin", table_sizes=(2,), games=2, seed=5,
                   move_time=2.0, bank=20.0, sandbox=None)  # fmt: skip
        assert t.id is not None
        run_tournament(db, t.id, jobs=2)
        with db.session() as session:
            matches = session.exec(select(Match).where(Match.tournament_id == t.id)).all()
    finally:
        db.close()
    assert len(matches) == 12 and all(m.status == "finished" for m in matches)
    spans: dict[int, list[tuple[datetime, datetime]]] = defaultdict(list)
    for m in matches:
        assert m.started_at is not None and m.finished_at is not None
        spans[m.seed].append((m.started_at, m.finished_at))
    assert len(spans) == 6 and all(len(v) == 2 for v in spans.values())
    for seed, (first, second) in ((s, sorted(v)) for s, v in spans.items()):
        assert first[1] <= second[0], f"seed {seed}: {first} overlaps {second}"
