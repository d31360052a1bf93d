"""``arena match`` records its matches in the store under the data directory; stored artifact
paths are relative to the data directory, so it can move."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import select

from arena.store.bots import add_bot, artifact_path, command_of, resolve_version
from arena.store.db import Database
from arena.store.models import BotVersion, Match
from arena.store.results import game_results
from arena.store.tournaments import load_replay
from arena.web.queries import MatchFilters, get_match, list_matches

from .helpers import REPO, arena, cli

GREEDY = REPO / "bots" / "greedy_bot.py"


def test_match_is_stored_not_written_to_the_current_folder(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "copy" / "replay.jsonl"
    run = arena(
        "match", "greedy", "random", "--seed", "7", "--no-sandbox", "--out", str(out), home=home, cwd=work
    )
    assert run.code == 0, run.stderr
    assert list(work.iterdir()) == []  # no replays/ and no logs/ in the current folder
    assert "stored as match 1 ('arena replays show 1')" in run.stderr
    assert (home / "logs" / "matches").is_dir() and any((home / "logs" / "matches").iterdir())
    db = Database()
    try:
        stored = load_replay(db, 1)
        assert out.read_text(encoding="utf-8") == stored  # --out still writes a copy
        head = json.loads(stored.splitlines()[0])
        assert head["seed"] == 7 and head["seating"] == ["greedy", "random"]
        with db.session() as session:
            [m] = session.exec(select(Match)).all()
        assert m.tournament_id is None and m.status == "finished"
        page = list_matches(db, MatchFilters())  # what the web app and 'arena replays list' show
        assert [r.id for r in page.items] == [1]
        row = get_match(db, 1)
        assert row is not None and [s.bot for s in row.seats] == ["greedy", "random"]
        assert game_results(db) == []  # a stand-alone match is not rated
    finally:
        db.close()
    listed = cli("replays", "list", home=home)
    assert "greedy" in listed.stdout and "random" in listed.stdout


def test_bots_used_by_path_are_recorded_apart_from_registered_ones(home: Path, tmp_path: Path) -> None:
    mine = tmp_path / "src" / "mine.py"
    mine.parent.mkdir()
    shutil.copy(GREEDY, mine)
    run = cli("match", str(mine), "random", "--seed", "8", "--no-sandbox", home=home, code=0)
    assert "stored as match 1" in run.stderr
    db = Database()
    try:
        row = get_match(db, 1)
        assert row is not None and [s.bot for s in row.seats] == ["file:mine.py", "random"]
    finally:
        db.close()
    listed = cli("bots", "list", home=home)
    assert "file:" not in listed.stdout  # not a registered bot: not listed, not a name
    assert "random" in listed.stdout  # a sample bot is registered under its name when first used


def test_no_record_keeps_the_database_out_of_it(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run = cli(
        "match",
        "greedy",
        "random",
        "--seed",
        "9",
        "--no-sandbox",
        "--no-record",
        "--out",
        str(out),
        home=home,
    )
    assert "stored as" not in run.stderr and out.exists()
    assert not (home / "arena.db").exists()


def test_moving_the_data_directory_keeps_bots_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = tmp_path / "old-home", tmp_path / "elsewhere" / "home"
    monkeypatch.setenv("ARENA_HOME", str(old))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    db = Database()
    v = add_bot(db, "mine", GREEDY)
    assert v.artifact == f"artifacts/{v.sha256}/greedy_bot.py"  # relative to the data directory
    assert str(old) not in v.command
    db.close()
    new.parent.mkdir()
    shutil.move(old, new)
    monkeypatch.setenv("ARENA_HOME", str(new))
    db = Database()
    try:
        moved = resolve_version(db, "mine")
        assert command_of(moved)[-1] == str(new.resolve() / v.artifact) and artifact_path(moved).is_file()
    finally:
        db.close()
    run = cli("match", "mine", "random", "--seed", "10", "--no-sandbox", home=new, code=0)
    assert "mine" in run.stdout and "forfeited" not in run.stderr


def test_absolute_paths_of_older_databases_still_work(home: Path) -> None:
    """Rows written before paths were relative (absolute artifact and command) are read as they
    are while they exist, and found under the data directory once it has moved."""
    db = Database()
    try:
        v = add_bot(db, "mine", GREEDY)
        copy = artifact_path(v)
        with db.session() as session:  # the old form: absolute paths everywhere
            row = session.get(BotVersion, v.id)
            assert row is not None
            row.artifact = str(copy)
            row.command = json.dumps(["{python}", str(copy)])
            session.add(row)
        assert command_of(resolve_version(db, "mine"))[-1] == str(copy)
        with db.session() as session:  # ...written in a data directory that has since moved
            row = session.get(BotVersion, v.id)
            assert row is not None
            gone = f"/nonexistent/old-home/artifacts/{v.sha256}/greedy_bot.py"
            row.artifact = gone
            row.command = json.dumps(["{python}", gone])
            session.add(row)
        moved = resolve_version(db, "mine")
        assert command_of(moved)[-1] == str(copy) and artifact_path(moved) == copy
    finally:
        db.close()


FULL_DISK = """
import sqlite3, sys
from sqlalchemy.exc import OperationalError
import arena.store.tournaments as tournaments

def full(*args, **kwargs):
    raise OperationalError("INSERT INTO replay ...", {}, sqlite3.OperationalError("database or disk is full"))

tournaments.record_result = full
sys.argv = ["arena", *sys.argv[1:]]
from arena.cli.main import main
main()
"""


def test_a_result_the_full_disk_refused_is_shown_and_its_replay_kept(home: Path, tmp_path: Path) -> None:
    """The disk under the database filled up during the match: storing its result failed with
    SQLite's "database or disk is full", which ended the command in a traceback, the result
    table never shown and the replay lost.  Now: the result, the error, the replay in the logs."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"}
    env.update(ARENA_HOME=str(home), COLUMNS="200")
    args = ["match", "greedy", "random", "--seed", "7", "--no-sandbox"]
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "the match was played but could not be stored" in done.stderr
    assert "database or disk is full" in done.stderr
    assert "greedy" in done.stdout and "finished" in done.stdout  # the result table
    replay = home / "logs" / "matches" / "m1.jsonl"
    assert f"replay: {replay}" in done.stderr and replay.read_text(encoding="utf-8").strip()
