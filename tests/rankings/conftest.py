"""Fixtures of the ranking tests: a fresh ARENA_HOME and SQLite database, and stored results
written through the store's own API (``add_match`` + ``record_result``), so the leaderboard reads
them exactly as it reads a tournament's."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.engine.scoring import placings_with_forfeits
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.bots import DuplicateUploadError, add_bot, resolve_version
from arena.store.db import Database
from arena.store.models import Tournament
from arena.store.tournaments import add_match, record_result

REPO = Path(__file__).resolve().parents[2]
FORFEITS = {"timeout", "crashed", "illegal-action", "malformed-action", "disconnected", "stalled", "no-show"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ARENA_HOME (artifacts stay out of the repository)."""
    folder = (tmp_path / "home").resolve()
    folder.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(folder))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    return folder


@pytest.fixture
def db(home: Path) -> Iterator[Database]:
    """A fresh SQLite database in ARENA_HOME."""
    database = Database(f"sqlite:///{home / 'arena.db'}")
    yield database
    database.close()


@dataclass(frozen=True)
class Game:
    """One stored game: bot names by seat, scores, and per seat "normal" or a forfeit reason."""

    bots: Sequence[str]
    scores: Sequence[int]
    ends: Sequence[str] = ()
    group: str = ""  # duplicate-dice group; default: a group of its own


def store_games(db: Database, games: Sequence[Game], *, name: str = "synthetic") -> int:
    """Register every bot named (a copy of a sample bot file each, so they are distinct
    artifacts), store ``games`` as finished matches of a new tournament, and return its id."""
    names = sorted({b for g in games for b in g.bots})
    sample = REPO / "bots" / "greedy_bot.py"
    for bot in names:
        folder = Path(db.url.removeprefix("sqlite:///")).parent / "files" / bot
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{bot}.py"
        path.write_text(sample.read_text() + f"\n# {bot}\n")
        with contextlib.suppress(DuplicateUploadError):  # already registered
            add_bot(db, bot, path)
    versions = {b: resolve_version(db, b).id for b in names}
    with db.session() as session:
        t = Tournament(
            name=name, format="round-robin", table_sizes="2", games=1, seed=1, move_time=1.0, bank=1.0
        )
        session.add(t)
        session.flush()
        assert t.id is not None
        tid = t.id
    for k, g in enumerate(games):
        ends = list(g.ends) or ["normal"] * len(g.bots)
        forfeited = [s for s, e in enumerate(ends) if e in FORFEITS]
        places = placings_with_forfeits(list(g.scores), forfeited)
        ids = [versions[b] for b in g.bots]
        mid = add_match(db, tid, 1000 + k, g.group or f"g{k}", [int(v) for v in ids if v is not None])
        seats = tuple(
            SeatOutcome(s, b, g.scores[s], places[s], ends[s], "", 0.0, 0.0, 0) for s, b in enumerate(g.bots)
        )
        termination = "forfeit" if forfeited else "normal"
        record_result(db, mid, MatchResult(f"m{mid}", 1000 + k, len(g.bots), termination, seats, "{}\n"))
    return tid
