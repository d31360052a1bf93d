"""The ladder on a Dask cluster (``arena serve --cluster``, ``arena ladder run --cluster``): a real
local cluster whose worker has a data folder of its own, so the bots' files travel to it; every
match is recorded and rated once."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import LocalCluster
from store.helpers import sample, wait_gone

from arena.ladder.background import LadderService
from arena.ladder.service import LadderSettings
from arena.referee.timecontrol import TimeControl
from arena.serve.services import ServeContext
from arena.store.bots import add_bot
from arena.store.db import Database

from .test_ladder_service import _check_consistent


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    worker_home = (tmp_path / "worker-home").resolve()
    worker_home.mkdir()
    lc = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},  # no port 8787 warning
        silence_logs=logging.ERROR, env={"ARENA_HOME": str(worker_home)},
    )  # fmt: skip
    try:
        yield str(lc.scheduler_address), worker_home
    finally:
        lc.close()  # type: ignore[no-untyped-call]
        assert not wait_gone(str(worker_home / "artifacts"), 10.0)


def test_the_ladder_service_on_a_dask_cluster(sqlite_db: Database, cluster: tuple[str, Path]) -> None:
    address, worker_home = cluster
    versions = [add_bot(sqlite_db, name, sample(name)) for name in ("greedy", "random", "invader")]
    lines: list[str] = []
    ctx = ServeContext(sqlite_db, cluster=address, sandbox=None, log=lines.append)
    settings = LadderSettings(seed=4, table_sizes=(2, 3), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=4)  # fmt: skip
    service = LadderService(ctx, settings)
    service.start()
    try:
        deadline = time.monotonic() + 180
        while service._thread.is_alive():
            assert time.monotonic() < deadline, lines
            time.sleep(0.2)
    finally:
        service.stop()
    assert service.error is None, lines
    assert any("handed out its 4 tables" in line for line in lines), lines
    _check_consistent(sqlite_db, 1, finished=2 + 3 + 2 + 3)
    for v in versions:  # the bots' files travelled to the worker's own data folder
        assert list((worker_home / "artifacts").glob(f"{v.sha256}/*")), v.filename
