"""A bot that remembers the dice of its games never plays a seed it has seen, in a real
tournament: one worker, kept-running (persistent) bot processes, duplicate dice under both seat
rotations.  ``bots/faulty/recall_bot.py`` logs for every game whether it recognised the dice of an
earlier game of its process; before the fix its process played the second rotation of each seed
knowing every throw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import select

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

REPO = Path(__file__).resolve().parents[2]
GAMES = 4  # seeds: 8 matches, each seed under both seatings


def test_a_remembering_bot_never_meets_dice_it_has_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = (tmp_path / "home").resolve()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    db = Database()
    try:
        add_bot(db, "greedy", REPO / "bots" / "greedy_bot.py")
        add_bot(db, "recall", REPO / "bots" / "faulty" / "recall_bot.py")
        t = create(db, ["greedy", "recall"], fmt="round-robin", table_sizes=(2,), games=GAMES, seed=11,
                   move_time=2.0, bank=20.0, sandbox=None)  # fmt: skip
        assert t.id is not None
        run_tournament(db, t.id, jobs=1)
        with db.session() as session:
            matches = session.exec(select(Match).where(Match.tournament_id == t.id)).all()
        assert len(matches) == 2 * GAMES and all(m.status == "finished" for m in matches)
        assert len({m.seed for m in matches}) == GAMES  # duplicate dice: each seed twice
    finally:
        db.close()
    logs = sorted(home.rglob("*recall*.stderr.log"))
    lines = [line for log in logs for line in log.read_text().splitlines() if "remembered dice" in line]
    assert len(lines) == 2 * GAMES, (logs, lines)  # one line per game
    succeeded = [line for line in lines if re.search(r": SUCCEEDED ", line)]
    assert not succeeded, succeeded
