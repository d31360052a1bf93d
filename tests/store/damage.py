"""Helpers for the damage and read-only tests: a played data folder, copies, and ways to damage a
SQLite file on purpose (truncation, garbage over chosen pages, bytes of one replay changed).

Everything here works on the file with the standard ``sqlite3`` module or raw bytes, never through
the code under test, so a test's expectations do not come from the code it checks.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import select

from arena.engine import format_throw, parse_throw
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match, MatchStatus
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

from .helpers import sample


@dataclass(frozen=True)
class Played:
    """A data folder holding one finished tournament (greedy vs invader, 2 seeds: 4 matches)."""

    home: Path
    tournament: int
    matches: list[int]

    @property
    def file(self) -> Path:
        return self.home / "arena.db"

    @property
    def url(self) -> str:
        return f"sqlite:///{self.file}"


@contextmanager
def _env(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in (*values, "ARENA_DATABASE_URL")}
    os.environ.update(values)
    os.environ.pop("ARENA_DATABASE_URL", None)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def play(home: Path, url: str | None = None, games: int = 2) -> Played:
    """Play a small real tournament (greedy vs invader, bot processes, unsandboxed) with data
    folder ``home`` into ``url`` (default: SQLite in ``home``); the database is closed
    afterwards, so a SQLite file stands alone (no ``-wal`` left)."""
    home.mkdir(parents=True, exist_ok=True)
    url = url or f"sqlite:///{home / 'arena.db'}"
    with _env(ARENA_HOME=str(home)):
        db = Database(url)
        add_bot(db, "greedy", sample("greedy"))
        add_bot(db, "invader", sample("invader"))
        t = create(db, ["greedy", "invader"], games=games, seed=20261201, move_time=2.0, bank=10.0)
        assert t.id is not None
        run_tournament(db, t.id, jobs=2)
        with db.session() as session:
            ids = sorted(
                int(i)
                for i in session.exec(select(Match.id).where(Match.status == MatchStatus.FINISHED)).all()
                if i is not None
            )
        db.close()
    assert len(ids) == 2 * games, ids
    assert not Path(f"{home / 'arena.db'}-wal").exists()
    return Played(home, t.id, ids)


def copy_to(played: Played, home: Path, *, page_bytes: int | None = None) -> Played:
    """A standalone copy of the database (no artifacts) in a new data folder ``home``; with
    ``page_bytes``, rebuilt with pages that small (1024: every replay spills into overflow pages
    of its own, so one replay can be damaged at the page level without touching the others)."""
    home.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(played.file)
    dst = sqlite3.connect(home / "arena.db")
    src.backup(dst)
    dst.execute("PRAGMA journal_mode=DELETE")
    if page_bytes is not None:
        dst.execute(f"PRAGMA page_size={page_bytes}")
        dst.execute("VACUUM")
        assert dst.execute("PRAGMA page_size").fetchone()[0] == page_bytes
    src.close()
    dst.close()
    return Played(home, played.tournament, list(played.matches))


def page_size(file: Path) -> int:
    """The page size from the file's header."""
    raw = int.from_bytes(file.read_bytes()[16:18], "big")
    return 65536 if raw == 1 else raw


def pages_of(file: Path, name: str, kinds: tuple[str, ...] = ("leaf", "internal", "overflow")) -> list[int]:
    """The pages of a table's b-tree (SQLite's dbstat table), in file order."""
    conn = sqlite3.connect(file)
    try:
        rows = conn.execute(
            "SELECT pageno, pagetype FROM dbstat WHERE name = ? ORDER BY pageno", (name,)
        ).fetchall()
    finally:
        conn.close()
    return [int(p) for p, kind in rows if kind in kinds]


def garble_pages(file: Path, pages: list[int], seed: int = 7) -> None:
    """Overwrite whole pages with random bytes (a disk or a copy gone wrong)."""
    size = page_size(file)
    rng = random.Random(seed)
    with file.open("r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(rng.randbytes(size))


def garble(file: Path, offset: int, length: int = 16384, seed: int = 7) -> None:
    """Write ``length`` random bytes at ``offset`` (the issue's "16 KB of garbage mid-file")."""
    with file.open("r+b") as fh:
        fh.seek(offset)
        fh.write(random.Random(seed).randbytes(length))


def replay_blob(file: Path, match_id: int) -> bytes:
    conn = sqlite3.connect(file)
    try:
        return bytes(conn.execute("SELECT data FROM replay WHERE match_id = ?", (match_id,)).fetchone()[0])
    finally:
        conn.close()


def damage_replay_bytes(file: Path, match_id: int) -> None:
    """Change 8 bytes inside one replay's stored (compressed) bytes, in place in the file: the
    pages stay well-formed (SQLite's checks pass) but the replay no longer decompresses or
    matches its hash."""
    blob = replay_blob(file, match_id)
    data = bytearray(file.read_bytes())
    probe = blob[8:72]
    at = data.find(probe)
    assert at >= 0 and data.find(probe, at + 1) < 0, "the replay's bytes are not found once in the file"
    for k in range(16, 24):
        data[at + k] ^= 0x5A
    file.write_bytes(bytes(data))


def _page_holding(data: bytes, chunk: bytes, size: int) -> int | None:
    """The page where ``chunk`` occurs, when it occurs exactly once in ``data``."""
    at = data.find(chunk)
    if at < 0 or data.find(chunk, at + 1) >= 0:
        return None
    return at // size + 1


def overflow_page_of(file: Path, match_id: int) -> int:
    """An overflow page in the middle of one replay's chain (a page no other row uses, whose
    link to the next page SQLite follows: garbage there is damage SQLite itself reports)."""
    blob = replay_blob(file, match_id)
    data = file.read_bytes()
    size = page_size(file)
    overflow = set(pages_of(file, "replay", ("overflow",)))
    last = _page_holding(data, blob[-16:], size)
    for start in range(len(blob) // 3, 2 * len(blob) // 3, 16):  # chunks may straddle two pages
        page = _page_holding(data, blob[start : start + 24], size)
        if page is not None and page in overflow and page != last:
            return page
    raise AssertionError(f"no middle overflow page found for match {match_id}")


def replay_text(file: Path, match_id: int) -> str:
    return zlib.decompress(replay_blob(file, match_id)).decode("utf-8")


def store_text(file: Path, match_id: int, text: str) -> None:
    """Overwrite a replay row with ``text`` (compressed, with its own correct hash and size)."""
    raw = text.encode("utf-8")
    conn = sqlite3.connect(file)
    with conn:
        conn.execute(
            "UPDATE replay SET data = ?, sha256 = ?, size = ? WHERE match_id = ?",
            (zlib.compress(raw, 6), hashlib.sha256(raw).hexdigest(), len(raw), match_id),
        )
    conn.close()


def alter_first_throw(text: str) -> tuple[str, int]:
    """The record with its first throw changed by one die (still valid notation); and that line."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith('{"throw"'):
            obj = json.loads(line)
            faces = list(parse_throw(obj["throw"]))
            faces[0] = (faces[0] + 1) % 6
            obj["throw"] = format_throw(faces)
            lines[n] = json.dumps(obj, separators=(", ", ": "))
            return "\n".join(lines) + "\n", n + 1
    raise AssertionError("no throw in the record")


def unreadable_replays(file: Path, ids: list[int]) -> list[int]:
    """The match ids whose replay row SQLite cannot read (independent of the arena's code)."""
    conn = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
    bad = []
    try:
        for mid in ids:
            try:
                conn.execute("SELECT data, sha256 FROM replay WHERE match_id = ?", (mid,)).fetchall()
            except sqlite3.DatabaseError:
                bad.append(mid)
    finally:
        conn.close()
    return bad
