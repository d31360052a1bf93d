"""The ladder page's note on the Plackett-Luce column says what is known (real app, real socket):
a stale table is "as of N matches (M finished now)", refitted shortly while the ladder runs (its
coordinator holds the ladder's lease: the refitter runs exactly then) or when it runs again; it
never claims a refit that nobody is doing (``ARENA_LADDER=0 arena serve``)."""

from __future__ import annotations

import json
import re
import urllib.request

from store.helpers import sample

from arena.ladder.field import ensure_ladder
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.lease import Lease
from arena.store.models_ladder import LadderFit, LadderRating, LadderRatingHistory
from arena.store.tournaments import add_match
from arena.web.app import create_app
from arena.web.server import BackgroundServer


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode("utf-8"))


def _note(page: str) -> str:
    found = re.search(r'<p class="muted" id="ladder-note">(.*?)</p>', page, re.S)
    assert found is not None, page
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_a_stale_table_says_as_of_what_and_who_refits_it(db: Database) -> None:
    t = ensure_ladder(db, seed=1)
    assert t.id is not None
    ids = [add_bot(db, name, sample(name)).id or 0 for name in ("greedy", "random")]
    match = add_match(db, t.id, 7, "2p", ids)
    with db.session() as session:  # a fit of 387 matches, then one more rated result: stale
        session.add(LadderFit(tournament_id=t.id, stamp=0, data=json.dumps({"ratings": {}, "matches": 387})))
        session.add(LadderRatingHistory(tournament_id=t.id, match_id=match, bot_version_id=ids[0], mu=26.0,
                                        sigma=8.0, games=1, placing=1))  # fmt: skip
    with BackgroundServer(create_app(db)) as site:
        idle = _note(_get(f"{site}/ladder"))
        fit = json.loads(_get(f"{site}/api/ladder"))["fit"]
        lease = Lease(db, t.id)
        lease.acquire()
        try:
            running = _note(_get(f"{site}/ladder"))
            fit_running = json.loads(_get(f"{site}/api/ladder"))["fit"]
        finally:
            lease.release()
    assert "being refitted" not in idle and "being refitted" not in running
    assert "as of 387 matches (0 finished now)" in idle and "when the ladder runs again" in idle, idle
    assert fit == {"current": False, "matches": 387, "ladder_running": False}
    assert "as of 387 matches (0 finished now)" in running and "the ladder is running" in running, running
    assert fit_running == {"current": False, "matches": 387, "ladder_running": True}


def test_an_interval_narrower_than_a_rating_point_is_not_measurable(db: Database) -> None:
    """A bot whose every resample gives about the same Plackett-Luce rating (a one-sided record:
    the prior alone holds it) showed e.g. "2286–2287"; it now says "not measurable", in the page
    and the JSON (``pl`` without bounds), as the leaderboards do.  A real interval is shown."""
    t = ensure_ladder(db, seed=1)
    assert t.id is not None
    ids = [add_bot(db, name, sample(name)).id or 0 for name in ("greedy", "random")]
    ratings = {str(ids[0]): [2286.4, 2286.2, 2286.9, 40], str(ids[1]): [1210.0, 1105.0, 1302.0, 40]}
    with db.session() as session:
        for k, vid in enumerate(ids):  # both ranked (40 games each)
            session.add(
                LadderRating(tournament_id=t.id, bot_version_id=vid, mu=30.0 - 10 * k, sigma=1.0, games=40)
            )
        session.add(
            LadderFit(tournament_id=t.id, stamp=0, data=json.dumps({"ratings": ratings, "matches": 40}))
        )
    with BackgroundServer(create_app(db)) as site:
        page = _get(f"{site}/ladder")
        rows = {r["bot"]: r for r in json.loads(_get(f"{site}/api/ladder"))["rows"]}
    cells = {m.group(1): re.sub(r"<[^>]+>", "", m.group(2)) for m in re.finditer(
        r'<a href="/bots/(\w+)/charts">.*?<td class="num">([^\n]*?)</td>\s*</tr>', page, re.S)}  # fmt: skip
    assert cells["greedy"].split() == ["2286", "not", "measurable"], (cells, rows)
    assert cells["random"].split() == ["1210", "1105–1302"], cells
    assert rows["greedy"]["pl"] == [2286.4, None, None] and rows["random"]["pl"] == [1210.0, 1105.0, 1302.0]
