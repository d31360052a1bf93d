"""A database URL this arena does not open (unparseable, another dialect, a driver that is not
installed, a bad port) is one line naming the accepted forms, never a traceback (a newcomer
review: every command ended in SQLAlchemy's ArgumentError, NoSuchModuleError or a missing
MySQLdb); a password in it is not echoed.  Nothing is created."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arena.store.db import Database, DatabaseUrlError

from .helpers import ARENA, arena_env

REPO = Path(__file__).resolve().parents[2]

FORMS = "give sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE"

BAD = {
    "unparseable": ("notaurl", "'notaurl' is not a database URL"),
    "unknown-dialect": ("bogus://x", "names 'bogus', which Pool Arena does not open"),
    "driver-not-installed": ("mysql://u:secret@127.0.0.1/x", "names 'mysql'"),
    "postgres-without-driver": (
        "postgresql://u:secret@127.0.0.1/x",
        "for PostgreSQL write postgresql+psycopg://",
    ),
    "bad-port": ("postgresql+psycopg://u:secret@127.0.0.1:xx/x", "is not a database URL"),
    "bad-port-with-an-at-in-the-password": (
        "postgresql+psycopg://u:pw@secret@127.0.0.1:xx/x",  # an unquoted '@' in the password
        "is not a database URL",
    ),
}


@pytest.mark.parametrize("url,said", BAD.values(), ids=BAD.keys())
def test_a_bad_database_url_is_one_clear_line(url: str, said: str, tmp_path: Path) -> None:
    with pytest.raises(DatabaseUrlError, match=FORMS.replace("+", r"\+")):
        Database(url)
    for args in (["bots", "list"], ["match", "greedy", "random"], ["tournament", "list"]):
        env = {**arena_env(tmp_path), "ARENA_DATABASE_URL": url}
        run = subprocess.run(
            [str(ARENA), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 1, (args, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, run.stderr)
        assert said in lines[0] and FORMS in lines[0] and "ARENA_DATABASE_URL" in lines[0], lines[0]
        assert "secret" not in run.stderr and "Traceback" not in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing created


def test_a_data_folder_that_is_a_file_is_named_by_read_commands(tmp_path: Path) -> None:
    """``ARENA_HOME`` naming a regular file: read commands said "there is no database at
    FILE/arena.db"; they say the folder is a file (as write commands do)."""
    home = tmp_path / "afile"
    home.write_text("not a folder\n", encoding="utf-8")
    for args in (["bots", "list"], ["replays", "list"]):
        env = {**arena_env(home)}
        run = subprocess.run(
            [str(ARENA), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 1, run.stderr
        assert f"{home} is a file, not a folder" in run.stderr and "set ARENA_HOME" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
    assert home.read_text(encoding="utf-8") == "not a folder\n"


def test_a_data_folder_that_is_a_file_is_named_by_write_commands(tmp_path: Path) -> None:
    """``ARENA_HOME`` naming a regular file (or a folder under one): a write command said
    "File exists (FOLDER is no write permission for this user (uid 0))", blaming permissions;
    it says which path is a file, not a folder."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n", encoding="utf-8")
    for home in (afile, afile / "sub"):
        run = subprocess.run(
            [str(ARENA), "bots", "add", "mine", str(REPO / "bots" / "random_bot.py"), "--no-check"],
            cwd=tmp_path, env=arena_env(home), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert run.returncode == 1, run.stderr
        assert f"{afile} is a file, not a folder" in run.stderr, run.stderr
        assert "permission" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert afile.read_text(encoding="utf-8") == "not a folder\n"
