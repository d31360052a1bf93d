"""In Chromium: the ladder page's note on the Plackett-Luce column follows the table as the page
updates itself (no reload): "as of N matches" once a result comes in after the fit, "refitted
shortly" while the ladder's coordinator holds its lease, nothing once the fit is current."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.helpers import sample

from arena.ladder.field import ensure_ladder
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.lease import Lease
from arena.store.models_ladder import LadderFit, LadderRatingHistory
from arena.store.tournaments import add_match
from arena.web.app import create_app
from arena.web.server import BackgroundServer

NOTE = "document.getElementById('fit-note').textContent"


def test_the_fit_note_follows_the_table_without_a_reload(browser: Any, tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        t = ensure_ladder(db, seed=1)
        assert t.id is not None
        ids = [add_bot(db, name, sample(name)).id or 0 for name in ("greedy", "random")]
        match = add_match(db, t.id, 7, "2p", ids)
        with db.session() as session:  # a fit, with no result after it: current
            session.add(
                LadderFit(tournament_id=t.id, stamp=0, data=json.dumps({"ratings": {}, "matches": 12}))
            )
        with BackgroundServer(create_app(db)) as site:
            page = browser.new_context().new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{site}/ladder")
            page.evaluate("window.__sameDocument = true")
            assert page.evaluate(NOTE) == ""
            with db.session() as session:  # a result rated after the fit: stale
                session.add(LadderRatingHistory(tournament_id=t.id, match_id=match, bot_version_id=ids[0],
                                                mu=26.0, sigma=8.0, games=1, placing=1))  # fmt: skip
            page.wait_for_function(f"{NOTE}.includes('as of 12 matches')", timeout=20_000)
            assert "will be refitted when the ladder runs again" in page.evaluate(NOTE)
            lease = Lease(db, t.id)
            lease.acquire()
            try:
                page.wait_for_function(
                    f"{NOTE}.includes('refitted shortly (the ladder is running)')", timeout=20_000
                )
            finally:
                lease.release()
            page.wait_for_function(f"{NOTE}.includes('when the ladder runs again')", timeout=20_000)
            assert page.evaluate("window.__sameDocument === true")  # never reloaded
            assert not errors, errors
    finally:
        db.close()
