"""Fixtures for the web and replay tests: real tournaments in a temporary ARENA_HOME, the web app
served on a free port, and Debian's Chromium driven by Playwright (never downloaded)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser.playkit import chromium  # (tests/ is on the path: its packages import so)
from sqlmodel import col, select

from arena.engine import format_throw, parse_throw
from arena.store.bots import add_bot, version_names
from arena.store.db import Database
from arena.store.models import Match, MatchSeat, Replay
from arena.store.tournaments import load_replay
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@dataclass
class Arena:
    """A data folder with finished tournaments (and, in copies, planted damaged replays)."""

    home: Path
    tournament: int  # greedy vs invader, 2 players
    matches: list[int]
    forfeit_tournament: int  # greedy, invader and a bot that forfeits, 3 players
    forfeit_matches: list[int]
    planted: dict[str, int] = field(default_factory=dict)  # what -> match id

    @property
    def url(self) -> str:
        return f"sqlite:///{self.home / 'arena.db'}"

    def db(self) -> Database:
        return Database(self.url)

    def copy(self, dest: Path) -> Arena:
        """A consistent copy of the database in ``dest`` (SQLite's backup API, WAL included)."""
        dest.mkdir(parents=True, exist_ok=True)
        src = sqlite3.connect(self.home / "arena.db")
        dst = sqlite3.connect(dest / "arena.db")
        with dst:
            src.backup(dst)
        src.close()
        dst.close()
        return Arena(
            dest, self.tournament, list(self.matches), self.forfeit_tournament, list(self.forfeit_matches)
        )


@pytest.fixture
def env_home(monkeypatch: pytest.MonkeyPatch) -> Callable[[Arena], None]:
    """Point ARENA_HOME (and nothing else) at an arena's folder for this test."""

    def use(arena: Arena) -> None:
        monkeypatch.setenv("ARENA_HOME", str(arena.home))
        monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)

    return use


def _ids(db: Database, tournament_id: int) -> list[int]:
    with db.session() as session:
        rows = session.exec(
            select(Match.id).where(Match.tournament_id == tournament_id).order_by(col(Match.id))
        ).all()
    return [int(i) for i in rows if i is not None]


def http_get(url: str) -> tuple[int, str]:
    """GET ``url``: (status, body as text), an HTTP error's too."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def two_bot_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Database, list[int], dict[int, str], int]:
    """A fresh arena in ``tmp_path`` (ARENA_HOME, for the CLI too) with greedy and random
    registered and a 2-player tournament of them created, no match played: (database, their
    version ids, their display names by version id, the tournament id)."""
    monkeypatch.setenv("ARENA_HOME", str(tmp_path))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    db = Database()
    vids = []
    for name in ("greedy", "random"):
        v = add_bot(db, name, REPO / "bots" / f"{name}_bot.py")
        assert v.id is not None
        vids.append(v.id)
    t = create(db, ["greedy", "random"], table_sizes=(2,), games=1, seed=1)
    assert t.id is not None
    return db, vids, version_names(db, vids), t.id


@pytest.fixture(scope="session")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """Two real, finished tournaments played by bot processes in a temporary ARENA_HOME."""
    home = tmp_path_factory.mktemp("arena-home")
    saved = {k: os.environ.get(k) for k in ("ARENA_HOME", "ARENA_DATABASE_URL", "FORFEIT_AT")}
    os.environ["ARENA_HOME"] = str(home)
    os.environ.pop("ARENA_DATABASE_URL", None)
    os.environ["FORFEIT_AT"] = "30"
    try:
        db = Database()
        add_bot(db, "greedy", REPO / "bots" / "greedy_bot.py")
        add_bot(db, "invader", REPO / "bots" / "invader_bot.py")
        add_bot(db, "forfeiter", HERE / "forfeit_bot.py")
        t1 = create(
            db, ["greedy", "invader"], table_sizes=(2,), games=1, seed=20240501, move_time=2.0, bank=10.0
        )
        assert t1.id is not None
        run_tournament(db, t1.id, jobs=2)
        t2 = create(
            db,
            ["greedy", "invader", "forfeiter"],
            table_sizes=(3,),
            games=1,
            seed=77,
            move_time=2.0,
            bank=10.0,
            name="with a forfeit",
        )
        assert t2.id is not None
        run_tournament(db, t2.id, jobs=2)
        data = Arena(home, t1.id, _ids(db, t1.id), t2.id, _ids(db, t2.id))
        db.close()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    yield data


# ---- damaging stored replays -------------------------------------------------------------


def throw_lines(text: str) -> list[int]:
    """1-based line numbers of the throw events of a record."""
    return [n for n, line in enumerate(text.splitlines(), start=1) if line.startswith('{"throw"')]


def alter_throw(text: str, line_no: int) -> str:
    """The record with the throw on ``line_no`` changed (still valid notation, one die different)."""
    import json

    lines = text.splitlines()
    obj = json.loads(lines[line_no - 1])
    faces = list(parse_throw(obj["throw"]))
    faces[0] = (faces[0] + 1) % 6
    obj["throw"] = format_throw(faces)
    lines[line_no - 1] = json.dumps(obj, separators=(", ", ": "))
    return "\n".join(lines) + "\n"


def store_replay(db: Database, match_id: int, text: str, *, sha: str | None = None) -> None:
    """Overwrite a match's stored replay: zlib-compressed ``text`` and its sha256 (or ``sha``)."""
    raw = text.encode("utf-8")
    with db.session() as session:
        r = session.get(Replay, match_id)
        assert r is not None
        r.data = zlib.compress(raw, 6)
        r.sha256 = sha if sha is not None else hashlib.sha256(raw).hexdigest()
        r.size = len(raw)
        session.add(r)


def plant_copy(db: Database, source_id: int) -> int:
    """A new finished match copying ``source_id`` (seats and replay); returns its id."""
    with db.session() as session:
        m = session.get(Match, source_id)
        assert m is not None
        top = max(int(o) for o in session.exec(select(Match.ordinal)).all())
        new = Match(
            tournament_id=m.tournament_id,
            ordinal=top + 1,
            seed=m.seed,
            group_key=m.group_key,
            status=m.status,
            termination=m.termination,
            finished_at=m.finished_at,
            duration=m.duration,
        )
        session.add(new)
        session.flush()
        assert new.id is not None
        for s in session.exec(select(MatchSeat).where(MatchSeat.match_id == source_id)).all():
            session.add(
                MatchSeat(
                    match_id=new.id,
                    seat=s.seat,
                    bot_version_id=s.bot_version_id,
                    score=s.score,
                    placing=s.placing,
                    termination=s.termination,
                    detail=s.detail,
                )
            )
        r = session.get(Replay, source_id)
        assert r is not None
        session.add(Replay(match_id=new.id, sha256=r.sha256, size=r.size, data=r.data))
        return new.id


def plant_damage(arena: Arena) -> Arena:
    """Add two damaged copies of the first match: ``content`` (one throw altered, hash updated,
    so only the content is wrong) and ``hash`` (bytes that do not match the stored sha256)."""
    db = arena.db()
    source = arena.matches[0]
    text = load_replay(db, source)
    content = plant_copy(db, source)
    line = throw_lines(text)[4]
    store_replay(db, content, alter_throw(text, line))
    damaged = plant_copy(db, source)
    original_sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    store_replay(db, damaged, text.replace('"action": "place ', '"action": "place  ', 1), sha=original_sha)
    db.close()
    arena.planted = {"content": content, "content_line": line, "hash": damaged}
    return arena


# ---- the web app and the browser ---------------------------------------------------------


@dataclass
class Site:
    """The web app served over a copy of the arena with planted damage."""

    url: str
    arena: Arena


@pytest.fixture(scope="session")
def site(arena: Arena, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    served = plant_damage(arena.copy(tmp_path_factory.mktemp("web-home")))
    db = served.db()
    server = BackgroundServer(create_app(db))
    url = server.start()
    yield Site(url, served)
    server.stop()
    db.close()


@pytest.fixture(scope="package")  # not session: Playwright's sync API keeps an event loop
def browser() -> Iterator[Any]:  # running in the main thread, which breaks asyncio.run() in later tests
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests save their screenshots."""
    return tmp_path_factory.mktemp("screenshots")
