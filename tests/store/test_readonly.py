"""Reading without writing: a read-only data directory, commands that only read, "not found".

Issue 12 item 5: on a read-only data directory the commands that only read work, and the ones
that write say the directory is read-only and what to do.  Issue 13 §4: a command that only reads
never creates a database (nor the data directory), and "not found" names the database searched.

The tests run as root, which ignores file permissions, so the directory is made read-only for real:
a read-only bind mount (bubblewrap, as the sandbox uses), or the permission bits with the
capabilities that let root ignore them dropped (``setpriv --bounding-set``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine

from arena.store.bots import add_bot, list_bots
from arena.store.db import (
    Database,
    DatabaseReadOnlyError,
    NoDatabaseError,
    SchemaTooOldError,
    _alembic_config,
)

from .damage import Played, copy_to, play
from .helpers import ARENA, cli_inproc, sample, table_counts

pytestmark = pytest.mark.timeout(300)

BWRAP = "/usr/bin/bwrap"
BATCH = Path(__file__).resolve().parent / "cli_batch.py"
DROP_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """One real tournament, played once for the module; each test works on its own copy."""
    return play(tmp_path_factory.mktemp("played") / "home")


@pytest.fixture
def copy(played: Played, tmp_path: Path) -> Played:
    return copy_to(played, tmp_path / "copy")


def _env(home: Path | None, url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_HOME", "ARENA_DATABASE_URL", "COLUMNS")}
    if home is not None:
        env["ARENA_HOME"] = str(home)
    if url is not None:
        env["ARENA_DATABASE_URL"] = url
    return env


def read_only_mount(folder: Path) -> list[str]:
    """A command prefix running its command with ``folder`` bind-mounted read-only (the rest of
    the file system as it is)."""
    return [BWRAP, "--bind", "/", "/", "--ro-bind", str(folder), str(folder), "--dev", "/dev",
            "--proc", "/proc", "--die-with-parent", "--"]  # fmt: skip


def arena(
    prefix: list[str], home: Path | None, *args: str, cwd: Path, code: int | None = 0
) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` as a user runs it (under ``prefix``), ARENA_HOME=``home`` (None: unset)."""
    proc = subprocess.run(
        [*prefix, str(ARENA), *args], env=_env(home), cwd=cwd, capture_output=True, text=True, timeout=120
    )
    if code is not None:
        assert proc.returncode == code, f"arena {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def batch(prefix: list[str], home: Path | None, commands: list[list[str]], *, cwd: Path) -> list[Outcome]:
    """Several ``arena`` commands in one interpreter under ``prefix`` (see ``cli_batch.py``)."""
    proc = subprocess.run(
        [*prefix, sys.executable, str(BATCH), json.dumps(commands)],
        env=_env(home), cwd=cwd, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    outcomes = [Outcome(**o) for o in json.loads(proc.stdout)]
    for o in outcomes:
        assert o.crash is None, f"arena {' '.join(o.args)} crashed:\n{o.crash}"
    return outcomes


@dataclass(frozen=True)
class Outcome:
    """How one command of a :func:`batch` ended."""

    args: list[str]
    code: int
    stdout: str
    stderr: str
    crash: str | None


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _read_commands(p: Played) -> list[tuple[list[str], str]]:
    """Commands that only read, with something each must print."""
    m = str(p.matches[0])
    return [
        (["tournament", "list"], "round-robin"),
        (["tournament", "show", str(p.tournament)], f"tournament {p.tournament}"),
        (["leaderboard"], "greedy"),
        (["replays", "list"], "invader"),
        (["replays", "show", m, "--step", "1"], f"match {m}"),
        (["replays", "export", m], '"game": "cool-am-pool"'),
        (["replays", "verify", "--all"], "verified 4 replays: 4 OK"),
        (["bots", "list"], "greedy"),
        (["bots", "show", "invader"], "invader"),
        (["db", "check"], "no damage found"),
    ]


def _write_commands() -> list[list[str]]:
    return [
        ["bots", "add", "another", str(sample("random"))],
        ["tournament", "create", "greedy", "invader", "--games", "1", "--no-sandbox"],
        ["db", "upgrade"],
    ]


def test_read_only_mount(copy: Played) -> None:
    """The data directory on a read-only mount: every command that only reads works and leaves
    no trace (SQLite opened ``immutable``: no -wal/-shm could be made); every command that
    writes says the directory is read-only, why, and what to do, and exits 1."""
    prefix = read_only_mount(copy.home)
    probe = subprocess.run([*prefix, "touch", str(copy.home / "probe")], capture_output=True, text=True)
    assert probe.returncode != 0 and "Read-only file system" in probe.stderr, probe  # truly read-only
    before = snapshot(copy.home)
    proc = arena(prefix, copy.home, "tournament", "list", cwd=copy.home)  # the console script itself
    assert "round-robin" in proc.stdout
    reads = _read_commands(copy)
    outcomes = batch(prefix, copy.home, [a for a, _ in reads], cwd=copy.home)
    for (_args, expected), o in zip(reads, outcomes, strict=True):
        assert o.code == 0 and expected in o.stdout, o
    for o in batch(prefix, copy.home, _write_commands(), cwd=copy.home):
        assert o.code == 1 and o.stderr.count("error: ") == 1, o
        assert f"the data directory {copy.home} is read-only (a read-only file system)" in o.stderr, o
        assert "ARENA_HOME" in o.stderr and "commands that only read" in o.stderr, o
    proc = arena(prefix, copy.home, *_write_commands()[0], cwd=copy.home, code=1)
    assert "is read-only" in proc.stderr
    assert snapshot(copy.home) == before


def test_directory_without_write_permission(copy: Played) -> None:
    """The data directory and database file without write permission (mode 555/444) for a user
    who cannot override it: the same as a read-only mount, with the cause "no write permission"."""
    os.chmod(copy.file, 0o444)
    os.chmod(copy.home, 0o555)
    try:
        probe = subprocess.run([*DROP_DAC, "touch", str(copy.home / "probe")], capture_output=True, text=True)
        assert probe.returncode != 0 and "Permission denied" in probe.stderr, probe
        before = snapshot(copy.home)
        reads = _read_commands(copy)
        outcomes = batch(DROP_DAC, copy.home, [a for a, _ in reads], cwd=copy.home)
        for (_args, expected), o in zip(reads, outcomes, strict=True):
            assert o.code == 0 and expected in o.stdout, o
        proc = arena(DROP_DAC, copy.home, *_write_commands()[0], cwd=copy.home, code=1)
        assert (
            f"the data directory {copy.home} is read-only (no write permission for this user" in proc.stderr
        )
        assert snapshot(copy.home) == before
        os.chmod(copy.home, 0o755)  # the folder writable, the file not: the file is named
        proc = arena(DROP_DAC, copy.home, *_write_commands()[0], cwd=copy.home, code=1)
        assert f"the database file {copy.file} is read-only" in proc.stderr, proc.stderr
    finally:
        os.chmod(copy.home, 0o755)
        os.chmod(copy.file, 0o644)


def test_a_data_directory_that_cannot_be_created(tmp_path: Path) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    home = parent / "new-home"
    proc = arena(
        read_only_mount(parent), home, "bots", "add", "x", str(sample("random")), cwd=tmp_path, code=1
    )
    assert f"cannot create the data directory {home}" in proc.stderr, proc.stderr
    assert "read-only file system" in proc.stderr
    assert not home.exists()


def test_web_serves_a_read_only_database(copy: Played) -> None:
    proc = subprocess.Popen(
        [*read_only_mount(copy.home), str(ARENA), "web", "--port", "0"],
        env=_env(copy.home), cwd=copy.home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        assert found, (line, proc.poll())
        base = found.group(1)
        for path in ("/", f"/matches/{copy.matches[0]}", f"/tournaments/{copy.tournament}"):
            with urllib.request.urlopen(base + path, timeout=30) as response:
                assert response.status == 200, path
                assert b"greedy" in response.read(), path
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_old_schema_is_not_upgraded_by_a_reader(copy: Played) -> None:
    """A reader finds an older schema: it says so and how to upgrade, and changes nothing;
    `arena db upgrade` upgrades it (keeping every row) and the reader works again."""
    engine = create_engine(copy.url)
    with engine.begin() as conn:
        command.downgrade(_alembic_config(conn), "-1")
    engine.dispose()
    conn2 = sqlite3.connect(copy.file)
    old = conn2.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    conn2.close()
    before = snapshot(copy.home)
    proc = arena([], copy.home, "tournament", "list", cwd=copy.home, code=1)
    assert f"the database {copy.file} has schema revision {old!r}, older than" in proc.stderr
    assert "arena db upgrade" in proc.stderr
    assert snapshot(copy.home) == before
    counts = table_counts(copy.url)
    up = arena([], copy.home, "db", "upgrade", cwd=copy.home)
    assert "schema revision" in up.stdout
    after = table_counts(copy.url)
    assert {k: v for k, v in after.items() if k in counts} == counts  # every row kept
    arena([], copy.home, "tournament", "list", cwd=copy.home)


# ---- issue 13 §4: a reader never creates a database; "not found" names the database ---------


def test_readers_never_create_a_database(tmp_path: Path) -> None:
    """Run from a folder without data, with neither ARENA_HOME nor ARENA_DATABASE_URL set:
    each command that only reads says there is no database there and how one is chosen, and
    creates nothing; a command that writes creates ./arena-data."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    expected_db = folder / "arena-data" / "arena.db"
    proc = arena([], None, "replays", "export", "85", cwd=folder, code=1)  # the command
    assert f"there is no database at {expected_db}" in proc.stderr, proc.stderr
    assert "neither ARENA_HOME nor ARENA_DATABASE_URL is set" in proc.stderr, proc.stderr
    commands = [
        ["replays", "list"],
        ["replays", "show", "1"],
        ["replays", "verify", "--all"],
        ["tournament", "list"],
        ["tournament", "show", "1"],
        ["leaderboard"],
        ["bots", "list"],
        ["bots", "show", "x"],
        ["db", "check"],
    ]
    for o in batch([], None, commands, cwd=folder):
        assert o.code == 1 and f"there is no database at {expected_db}" in o.stderr, o
        assert "ARENA_HOME" in o.stderr and "ARENA_DATABASE_URL" in o.stderr, o
    assert list(folder.iterdir()) == []
    arena([], None, "bots", "add", "mine", str(sample("random")), cwd=folder)
    assert expected_db.is_file()


def test_not_found_names_the_database(copy: Played) -> None:
    where = f"(looked in the database {copy.file})"
    for args, what in (
        (["replays", "export", "85"], "no match 85"),
        (["replays", "show", "85"], "no match 85"),
        (["tournament", "show", "99"], "no tournament 99"),
        (["leaderboard", "--tournament", "99"], "no tournament 99"),
        (["bots", "show", "nosuch"], "no bot named 'nosuch'"),
        (["replays", "list", "--bot", "nosuch"], "no bot 'nosuch'"),
    ):
        proc = cli_inproc(copy.home, copy.url, *args, code=1)
        assert what in proc.stderr and where in proc.stderr, (args, proc.stderr)
    verify = cli_inproc(copy.home, copy.url, "replays", "verify", "85", code=1)
    assert f"FAIL match 85: no such match in {copy.file}" in verify.stdout


# ---- the store API ---------------------------------------------------------------------------


def test_read_only_open_creates_and_writes_nothing(tmp_path: Path, db_url: str, backend: str) -> None:
    """``Database(url, readonly=True)``: a missing SQLite file (or folder) is not created; an empty
    database gets no schema; once migrated, a write through a read-only open is refused with
    :class:`DatabaseReadOnlyError` and changes nothing (SQLite and PostgreSQL)."""
    if backend == "sqlite":
        missing = tmp_path / "no" / "such" / "arena.db"
        with pytest.raises(NoDatabaseError, match="there is no database at"):
            Database(f"sqlite:///{missing}", readonly=True)
        assert not (tmp_path / "no").exists()
        Path(db_url.removeprefix("sqlite:///")).touch()  # an empty file: no schema
    with pytest.raises(NoDatabaseError, match="has no Pool Arena schema"):
        Database(db_url, readonly=True)
    assert table_counts(db_url) == {}  # no table created, not even alembic_version
    Database(db_url).close()  # a writer creates the schema
    before = table_counts(db_url)
    reader = Database(db_url, readonly=True)
    try:
        with pytest.raises(DatabaseReadOnlyError, match="opened read-only"):
            add_bot(reader, "sneaky", sample("random"))
    finally:
        reader.close()
    assert table_counts(db_url) == before


def test_old_schema_error_type(copy: Played) -> None:
    engine = create_engine(copy.url)
    with engine.begin() as conn:
        command.downgrade(_alembic_config(conn), "-1")
    engine.dispose()
    with pytest.raises(SchemaTooOldError, match="arena db upgrade"):
        Database(copy.url, readonly=True)


def test_reader_sees_a_writers_new_rows(copy: Played) -> None:
    """A read-only open of a writable folder (``mode=ro``, not ``immutable``) follows a writer
    that commits while it is open (what `arena web` needs during a tournament)."""
    reader = Database(copy.url, readonly=True)
    writer = Database(copy.url)
    try:
        assert [i.bot.name for i in list_bots(reader)] == ["greedy", "invader"]
        add_bot(writer, "newcomer", sample("random"))
        time.sleep(0.05)
        assert [i.bot.name for i in list_bots(reader)] == ["greedy", "invader", "newcomer"]
    finally:
        reader.close()
        writer.close()
