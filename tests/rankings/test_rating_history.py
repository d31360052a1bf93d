"""The rating history (``rating`` table) files each stored rating under the bot version that
earned it."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import select

from arena.leaderboard import leaderboard, store_ratings
from arena.store.bots import add_bot, resolve_version
from arena.store.db import Database
from arena.store.models import RatingRow

from .conftest import REPO, Game, store_games


def test_a_rating_is_stored_under_the_version_that_played(db: Database, home: Path) -> None:
    # version 1 of "alpha" never plays; version 2 (the latest) plays the tournament, and the
    # tournament's leaderboard names it plain "alpha" (the only version of it in the tournament)
    old = home / "old" / "alpha.py"
    old.parent.mkdir()
    old.write_text((REPO / "bots" / "greedy_bot.py").read_text() + "\n# version 1\n")
    add_bot(db, "alpha", old)
    games = [Game(["alpha", "beta"], [30, 10], group=f"g{k}") for k in range(3)]
    games += [Game(["beta", "alpha"], [10, 30], group=f"g{k}") for k in range(3)]
    tid = store_games(db, games)
    v2 = resolve_version(db, "alpha")
    assert v2.version == 2
    rows = leaderboard(db, tournament_id=tid, system="pl", min_games=0)
    assert {r.bot for r in rows} == {"alpha", "beta"}
    store_ratings(db, rows, "pl", f"tournament:{tid}", tournament_id=tid)
    with db.session() as session:
        stored = {row.bot_version_id: row.rating for row in session.exec(select(RatingRow)).all()}
    alpha = next(r for r in rows if r.bot == "alpha")
    beta = next(r for r in rows if r.bot == "beta")
    assert stored == {v2.id: alpha.rating, resolve_version(db, "beta").id: beta.rating}
