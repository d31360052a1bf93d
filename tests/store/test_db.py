"""The database: migrations, idempotent opening, refusing a newer schema, WAL, concurrent writers."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text
from sqlmodel import SQLModel

from arena.store.bots import add_bot, bot_versions, list_bots
from arena.store.db import Database, SchemaTooNewError, _alembic_config
from arena.store.tournaments import list_tournaments
from arena.tournament.service import create

from .helpers import ARENA, alembic_version, arena_env, bot_copy, run_cli, sample, table_counts

SCRIPT = ScriptDirectory.from_config(_alembic_config(None))
HEAD = SCRIPT.get_current_head()
REVISIONS = [r.revision for r in reversed(list(SCRIPT.walk_revisions()))]  # oldest first
# the schema as released in revision 0001: a released migration must never change (add a new one)
RELEASED_0001_MATCHSEAT = {
    "match_id", "seat", "bot_version_id", "score", "placing", "termination", "detail",
    "think_total", "think_max", "decisions",
}  # fmt: skip
MODEL_TABLES = set(SQLModel.metadata.tables)


def _columns(url: str) -> dict[str, set[str]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            insp = inspect(conn)
            return {t: {c["name"] for c in insp.get_columns(t)} for t in insp.get_table_names()}
    finally:
        engine.dispose()


def test_migrations_create_every_table(db: Database, db_url: str) -> None:
    expected = {
        "bot",
        "botversion",
        "tournament",
        "tournamententry",
        "match",
        "matchseat",
        "replay",
        "rating",
    }
    assert expected <= MODEL_TABLES
    columns = _columns(db_url)
    assert set(columns) == MODEL_TABLES | {"alembic_version"}
    for name, table in SQLModel.metadata.tables.items():
        assert columns[name] == {c.name for c in table.columns}, f"table {name} differs from its model"
    assert db.revision == HEAD
    assert alembic_version(db_url) == [HEAD]


def test_opening_twice_is_idempotent(db: Database, db_url: str) -> None:
    add_bot(db, "greedy", sample("greedy"))
    db.close()
    before = table_counts(db_url)
    for _ in range(2):
        again = Database(db_url)
        assert again.revision == HEAD
        assert [i.bot.name for i in list_bots(again)] == ["greedy"]
        again.close()
    assert table_counts(db_url) == before
    assert alembic_version(db_url) == [HEAD]


def test_newer_schema_is_refused_untouched(db: Database, db_url: str, arena_home: Path) -> None:
    add_bot(db, "greedy", sample("greedy"))
    add_bot(db, "invader", sample("invader"))
    t = create(db, ["greedy", "invader"], games=1, seed=3)
    db.close()
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
    engine.dispose()
    before = table_counts(db_url)
    assert before["bot"] == 2 and before["match"] == 2 and before["matchseat"] == 4

    with pytest.raises(SchemaTooNewError) as info:
        Database(db_url)
    message = str(info.value)
    assert "9999_from_the_future" in message
    assert "upgrade Pool Arena" in message
    assert "ARENA_DATABASE_URL" in message
    assert "Nothing was changed" in message
    assert "arena:arena@" not in message  # the password is hidden

    proc = run_cli(arena_home, db_url, "bots", "list", code=1)
    assert "error:" in proc.stderr and "newer than this Pool Arena knows" in proc.stderr

    assert table_counts(db_url) == before
    assert alembic_version(db_url) == ["9999_from_the_future"]

    engine = create_engine(db_url)  # put the known revision back: the data is intact
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": HEAD})
    engine.dispose()
    reopened = Database(db_url)
    assert [i.bot.name for i in list_bots(reopened)] == ["greedy", "invader"]
    assert [x.id for x, _ in list_tournaments(reopened)] == [t.id]
    reopened.close()


def _upgrade_to(url: str, revision: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), revision)
    engine.dispose()


def test_released_revision_0001_is_unchanged(db_url: str) -> None:
    assert REVISIONS[0] == "0001"
    _upgrade_to(db_url, "0001")
    assert _columns(db_url)["matchseat"] == RELEASED_0001_MATCHSEAT


def test_older_databases_are_upgraded(new_db_url: Callable[[], str]) -> None:
    """A database at any older revision, with data in it, is upgraded to the newest on open."""
    assert len(REVISIONS) >= 1 and REVISIONS[-1] == HEAD
    for old in REVISIONS[:-1]:
        url = new_db_url()
        _upgrade_to(url, old)
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO bot (name, created_at) VALUES ('veteran', '2026-01-02 03:04:05')"))
        engine.dispose()
        db = Database(url)
        assert db.revision == HEAD
        bot, versions = bot_versions(db, "veteran")
        assert bot.name == "veteran" and versions == []
        db.close()
        assert alembic_version(url) == [HEAD]
        columns = _columns(url)
        for name, table in SQLModel.metadata.tables.items():
            assert columns[name] == {c.name for c in table.columns}, f"{name} after upgrading from {old}"


def test_sqlite_runs_in_wal_mode(sqlite_url: str) -> None:
    db = Database(sqlite_url)
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    db.close()
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as raw:  # WAL is a property of the file, seen by any client
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


OPENER = """
import sys, time
from pathlib import Path
from arena.store.db import Database
print("ready", flush=True)
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
Database(sys.argv[1]).close()
print("opened", flush=True)
"""


def test_concurrent_first_open(new_db_url: Callable[[], str], tmp_path: Path) -> None:
    """Several processes opening one new, empty database at the same instant: one creates the
    schema, the others wait for it and find it done (no 'already exists' error)."""
    for rnd in range(2):
        url = new_db_url()
        go = tmp_path / f"go{rnd}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, url, str(go)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        go.touch()  # all at once
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and "opened" in out, f"round {rnd}: {err}"
        assert alembic_version(url) == [HEAD]
        assert set(_columns(url)) == MODEL_TABLES | {"alembic_version"}


def test_concurrent_cli_writers(sqlite_url: str, arena_home: Path, tmp_path: Path) -> None:
    """Two ``arena bots add`` processes at the same time on one SQLite file, the first time on a
    database that does not exist yet (both migrate it at once): no 'database is locked'."""
    db_url = sqlite_url
    env = arena_env(arena_home, db_url)
    expected = []
    for rnd in range(3):
        file = bot_copy(tmp_path / "src", f"bot{rnd}", extra=f"round {rnd} " + "x" * 20000)
        procs = []
        for who in ("a", "b"):  # the same file under two names: one artifact written concurrently
            name = f"{who}{rnd}"
            expected.append(name)
            cmd = [str(ARENA), "bots", "add", name, str(file)]
            procs.append(
                subprocess.Popen(
                    cmd, env=env, cwd=arena_home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
            )
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, f"round {rnd}: exit {p.returncode}\n{out}\n{err}"
            assert "locked" not in err and "Traceback" not in err
            assert "version 1" in out
    db = Database(db_url)
    infos = list_bots(db)
    db.close()
    assert sorted(i.bot.name for i in infos) == sorted(expected)
    assert all(i.versions == 1 for i in infos)
    artifacts = sorted(p.name for p in (arena_home / "artifacts").rglob("*") if p.is_file())
    assert artifacts == sorted(f"bot{r}.py" for r in range(3))  # no temporary files left behind


def test_bundled_revisions_are_read_as_alembic_reads_them() -> None:
    """The store reads the newest revision from the migration files without importing Alembic
    (so opening a database is fast); it must agree with Alembic's own reading."""
    from arena.store.db import bundled_revisions

    head, known = bundled_revisions()
    assert head == SCRIPT.get_current_head()
    assert known == set(REVISIONS)


def test_opening_a_current_database_does_not_import_alembic(tmp_path: Path) -> None:
    code = (
        "import sys; from arena.store.db import Database; "
        f"Database('sqlite:///{tmp_path}/a.db').close(); "  # creates and migrates: Alembic loads
        "[sys.modules.pop(m) for m in list(sys.modules) if m == 'alembic' or m.startswith('alembic.')]; "
        f"Database('sqlite:///{tmp_path}/a.db').close(); "
        f"Database('sqlite:///{tmp_path}/a.db', readonly=True).close(); "
        "print(any(m == 'alembic' or m.startswith('alembic.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("folder", ["data%41", "data?mode=ro", "data#1", "data dir ü"])
def test_the_database_is_in_the_data_directory_whatever_its_name(
    folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ARENA_HOME went into the URL as it was: ``data%41`` put the database in ``dataA`` and
    ``data?mode=ro`` in a file ``data`` beside the folder, apart from the logs and bot files."""
    from arena.store.db import database_url, sqlite_path
    from arena.store.location import plain_sqlite_path

    parent = tmp_path / "data"
    parent.mkdir()
    home = parent / folder
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    url = database_url()
    assert sqlite_path(url) == plain_sqlite_path(url) == home / "arena.db"
    db = Database()
    try:
        add_bot(db, "mine", sample("random"))
    finally:
        db.close()
    assert (home / "arena.db").is_file()
    assert [p.name for p in parent.iterdir()] == [folder]


def test_a_data_directory_not_named_in_utf8_is_refused_clearly(tmp_path: Path) -> None:
    """A data directory named in Latin-1 has no database URL: every command that opens the
    database ended in a UnicodeEncodeError traceback; now one line says what is wrong."""
    home = os.fsdecode(bytes(tmp_path) + b"/daten-\xe4")
    env = {**os.environ, "ARENA_HOME": home}
    env.pop("ARENA_DATABASE_URL", None)
    for args in (["bots", "list"], ["bots", "add", "mine", str(sample("random")), "--no-check"]):
        done = subprocess.run([str(ARENA), *args], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done
        assert done.stderr.startswith("error: the database ") and "not UTF-8" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_a_full_disk_escaping_a_command_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's "database or disk is full" (here: a database held to its page limit) escaping a
    command ('arena bots add', 'arena users add-admin' on a full disk) was a traceback; it is one
    line that says which database and what to do, exit 1."""
    from sqlalchemy.exc import OperationalError

    from arena.cli.common import escaped
    from arena.store.db import classify

    conn = sqlite3.connect(tmp_path / "small.db")
    conn.execute("CREATE TABLE t (x BLOB)")
    conn.execute("PRAGMA max_page_count = 3")
    with pytest.raises(sqlite3.OperationalError) as full:
        for _ in range(10):
            conn.execute("INSERT INTO t VALUES (zeroblob(4000))")
    conn.close()
    assert classify(full.value) == "full"
    exit_ = escaped(OperationalError("INSERT INTO botversion ...", {}, full.value))
    assert exit_ is not None and exit_.exit_code == 1
    said = capsys.readouterr().err
    assert said.startswith("error: the database ") and "database or disk is full" in said
    assert "free some space on its disk" in said and said.count("\n") == 1


def test_a_database_locked_too_long_is_named_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening waits for a busy SQLite database (``LOCKED_RETRY_S``); past that the error names
    the database and what holds such a lock (it said "cannot open the database: database is
    locked", no file and no advice, after a minute's wait)."""
    from arena.store import db as store_db
    from arena.store.db import DatabaseUnavailableError, migrate

    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(store_db, "LOCKED_RETRY_S", 0.3)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.1})
    try:
        with pytest.raises(DatabaseUnavailableError) as info:
            migrate(engine)
    finally:
        engine.dispose()
        holder.close()
    message = str(info.value)
    assert str(path) in message and "database is locked" in message, message
    assert "another process held a lock on it" in message and "try again" in message, message


def test_a_database_of_another_program_is_said_so_and_left_as_it_is(db_url: str) -> None:
    """A database holding another program's table named like one of ours (``bot``): opening it
    for writing ended in a ProgrammingError traceback (DuplicateTable) on PostgreSQL, where SQLite
    said "cannot open the database ...: table bot already exists"; a read-only open called it
    "empty".  Both now say what is there, and nothing is changed."""
    from arena.store.db import DatabaseUnavailableError, NoDatabaseError

    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE bot (id INTEGER PRIMARY KEY, owner TEXT)"))
    with pytest.raises(NoDatabaseError, match="it holds other tables: bot"):
        Database(db_url, readonly=True)
    with pytest.raises(DatabaseUnavailableError, match=r"bot.* already exists") as info:
        Database(db_url)
    if engine.dialect.name == "postgresql":
        assert "another program" in str(info.value) and "Nothing was changed" in str(info.value)
    with engine.connect() as conn:
        assert inspect(conn).get_table_names() == ["bot"]
        assert [c["name"] for c in inspect(conn).get_columns("bot")] == ["id", "owner"]
    engine.dispose()


def test_another_programs_alembic_schema_is_named_as_such(db_url: str) -> None:
    """A database of another program that uses Alembic (its own ``alembic_version``, no table of
    ours) was refused as "newer than this Pool Arena knows ... upgrade Pool Arena": advice that
    cannot help.  It is named as another program's now, for writing and for reading, and left as
    it is; a newer Pool Arena's database (our tables, an unknown revision) is still "newer"."""
    from arena.store.db import ForeignSchemaError

    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('ae1027a6acf')"))
        conn.execute(text("CREATE TABLE invoices (id INTEGER PRIMARY KEY)"))
    for readonly in (False, True):
        with pytest.raises(ForeignSchemaError, match="another program's schema") as info:
            Database(db_url, readonly=readonly)
        assert "'ae1027a6acf'" in str(info.value) and "invoices" in str(info.value)
        assert "upgrade Pool Arena" not in str(info.value) and "Nothing was changed" in str(info.value)
    with engine.connect() as conn:
        assert sorted(inspect(conn).get_table_names()) == ["alembic_version", "invoices"]
        assert conn.execute(text("SELECT version_num FROM alembic_version")).all() == [("ae1027a6acf",)]
    engine.dispose()
