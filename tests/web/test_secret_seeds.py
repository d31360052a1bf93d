"""The dice seed stays secret on the web while its dice are still in play (the seed tells every
throw, R5 / rules §5): a running match's seed, the seed of a finished match whose other seat
rotation (same seed, duplicate dice) is still running, and an unfinished tournament's seed (every
match seed follows from it) are not in any page or JSON answer; once everything is over they are.
Real app over a copy of real tournaments, real HTTP."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from arena.store.models import Match, Tournament

from .conftest import Arena


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return str(r.read().decode("utf-8"))


def _set(arena: Arena, match_id: int, match_status: str, tournament_status: str) -> None:
    db = arena.db()
    try:
        with db.session() as session:
            m = session.get(Match, match_id)
            t = session.get(Tournament, arena.tournament)
            assert m is not None and t is not None
            m.status, t.status = match_status, tournament_status
            session.add(m)
            session.add(t)
    finally:
        db.close()


@pytest.fixture()
def served(arena: Arena, tmp_path: Path) -> Iterator[tuple[str, Arena, int, int]]:
    """The app over a copy in which the tournament's second seat rotation is still running."""
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    copy = arena.copy(tmp_path / "home")
    db = copy.db()
    with db.session() as session:
        first, second = session.exec(
            select(Match).where(Match.tournament_id == copy.tournament).order_by(col(Match.id))
        ).all()[:2]
        assert first.seed == second.seed  # two seat rotations of one seed (duplicate dice)
        seed, running, finished = first.seed, second.id, first.id
        tournament = session.get(Tournament, copy.tournament)
        assert tournament is not None
        t_seed = tournament.seed
    assert running is not None and finished is not None
    _set(copy, running, "running", "running")
    server = BackgroundServer(create_app(db))
    url = server.start()
    try:
        yield url, copy, seed, t_seed
    finally:
        server.stop()
        db.close()


def test_seeds_in_play_are_secret_and_shown_once_over(served: tuple[str, Arena, int, int]) -> None:
    url, copy, seed, t_seed = served
    ids = sorted(copy.matches)[:2]
    finished, running = ids
    api: dict[str, Any] = json.loads(_get(f"{url}/api/matches/{running}"))
    assert api["status"] == "running" and api["seed"] is None
    assert json.loads(_get(f"{url}/api/matches/{finished}"))["seed"] is None  # its sibling runs
    view = json.loads(_get(f"{url}/api/matches/{finished}/replay"))
    assert view["match"]["seed"] is None and "secret" in view["header"]["seed"]
    listed = json.loads(_get(f"{url}/api/matches?status=running"))["items"]
    assert [m["seed"] for m in listed] == [None]
    assert json.loads(_get(f"{url}/api/tournaments/{copy.tournament}"))["seed"] is None
    pages = {
        f"/matches/{running}": "secret until its games are over",
        f"/matches/{finished}": "secret until its games are over",
        f"/live/{running}": "secret while the game is on",
        f"/tournaments/{copy.tournament}": "secret until the tournament is finished",
    }
    for path, said in pages.items():
        html = _get(url + path)
        assert said in html, path
        assert str(seed) not in html and str(t_seed) not in html, path

    _set(copy, running, "finished", "finished")  # all over: the seeds are public
    assert json.loads(_get(f"{url}/api/matches/{running}"))["seed"] == str(seed)
    assert json.loads(_get(f"{url}/api/matches/{finished}/replay"))["header"]["seed"] == str(seed)
    assert json.loads(_get(f"{url}/api/tournaments/{copy.tournament}"))["seed"] == str(t_seed)
    assert f"seed {seed}" in _get(f"{url}/matches/{finished}")
