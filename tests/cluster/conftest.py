"""Cluster-test fixtures: a real local Dask cluster of two worker processes (one match at a time
each, with a data folder of their own, so bot artifacts must travel to them), a private
ARENA_HOME per test, and the reference results of a local run of the standard tournament."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster

from arena.store.db import Database
from arena.tournament.runner import run_tournament

from .helpers import TOTAL, match_rows, outcome, setup_tournament, wait_gone


def _no_leftover_bots(*homes: Path, timeout: float = 10.0) -> None:
    left: dict[int, str] = {}
    for home in homes:
        left |= wait_gone(str(home / "artifacts"), timeout)
    for pid in left:  # clean up before failing, so one failure does not leak into other tests
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert not left, f"bot processes survived: {left}"


@pytest.fixture(scope="session")
def worker_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Dask workers' ARENA_HOME (their artifact cache and bot logs)."""
    return tmp_path_factory.mktemp("worker-home").resolve()


@pytest.fixture(scope="session")
def cluster(worker_home: Path) -> Iterator[LocalCluster]:
    """Two worker processes (nannies restart a killed one), threads_per_worker=1."""
    lc = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},  # no port 8787 warning
        silence_logs=logging.ERROR,
        env={"ARENA_HOME": str(worker_home)},
    )
    yield lc
    lc.close()
    _no_leftover_bots(worker_home)


@pytest.fixture
def client(cluster: LocalCluster) -> Iterator[Client]:
    """A client of the cluster, with both workers up."""
    c = Client(cluster, set_as_default=False)
    c.wait_for_workers(2, timeout=120)
    yield c
    c.close()


@pytest.fixture(autouse=True)
def arena_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker_home: Path) -> Iterator[Path]:
    """This test's coordinator ARENA_HOME; afterwards no bot may still run (theirs or ours)."""
    home = (tmp_path / "home").resolve()
    home.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    yield home
    _no_leftover_bots(home, worker_home)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """A fresh SQLite database."""
    database = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    yield database
    database.close()


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
    """The standard tournament run locally (run_tournament, 2 worker processes): its outcome."""
    home = tmp_path_factory.mktemp("reference").resolve()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ARENA_HOME", str(home))
        db = Database(f"sqlite:///{home / 'arena.db'}")
        try:
            tid = setup_tournament(db, sandbox=False)
            run_tournament(db, tid, jobs=2)
            rows = match_rows(db, tid)
        finally:
            db.close()
    assert len(rows) == TOTAL and all(r["status"] == "finished" for r in rows)
    _no_leftover_bots(home)
    return outcome(rows)
