"""Store-test fixtures: a private ARENA_HOME per test, and a fresh database on each backend.

``db_url`` runs a test on SQLite (a file under tmp_path) and on PostgreSQL (a new database per
test, created from ``ARENA_TEST_POSTGRES_URL`` and dropped afterwards).  Without that variable the
PostgreSQL tests fail: ``./dev test`` starts a server and sets it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import URL, make_url

from arena.store.db import Database

from .helpers import wait_gone

PG_ENV = "ARENA_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(autouse=True)
def arena_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """ARENA_HOME is a fresh folder (artifacts and logs stay out of the repository); afterwards
    no bot process launched from its artifacts may still run."""
    home = (tmp_path / "home").resolve()
    home.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    yield home
    marker = str(home / "artifacts")
    left = wait_gone(marker, timeout=5.0)
    for pid in left:  # clean up before failing, so one failure does not leak into other tests
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert not left, f"bot processes survived the test: {left}"


def _admin_url() -> URL:
    raw = os.environ.get(PG_ENV)
    if not raw:
        pytest.fail(
            f"{PG_ENV} is not set, so the PostgreSQL store tests cannot run. Run './dev test' (it "
            f"starts PostgreSQL and sets it) or export "
            f"{PG_ENV}=postgresql+psycopg://USER:PASSWORD@HOST:5432/postgres "
            f"(a role that may CREATE DATABASE)."
        )
    return make_url(raw)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The database backend under test."""
    return str(request.param)


@pytest.fixture
def new_db_url(backend: str, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Make another fresh, empty database on this test's backend; all are removed afterwards."""
    created: list[str] = []
    admin: URL | None = None

    def make() -> str:
        nonlocal admin
        if backend == "sqlite":
            path = tmp_path / f"db{len(created)}" / "arena.db"
            path.parent.mkdir()
            created.append(str(path))
            return f"sqlite:///{path}"
        admin = admin or _admin_url()
        name = f"arena_t_{secrets.token_hex(6)}"
        conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return admin.set(database=name).render_as_string(hide_password=False)

    yield make
    if backend == "postgres" and admin is not None:
        conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            for name in created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def db_url(new_db_url: Callable[[], str]) -> str:
    """A fresh, empty database (not yet migrated) on each backend."""
    return new_db_url()


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """The fresh database, opened (migrated)."""
    database = Database(db_url)
    yield database
    database.close()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite database file that does not exist yet."""
    folder = tmp_path / "sqlite"
    folder.mkdir()
    return f"sqlite:///{folder / 'arena.db'}"


@pytest.fixture
def sqlite_db(sqlite_url: str) -> Iterator[Database]:
    """A fresh SQLite database, opened (for tests whose subject does not depend on the backend)."""
    database = Database(sqlite_url)
    yield database
    database.close()
