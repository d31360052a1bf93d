"""``arena serve --cluster``: validation matches run on a Dask cluster (a real local one, its
worker with a data folder of its own, so the uploaded bot's file must travel to it)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import LocalCluster
from store.helpers import wait_gone

from arena.accounts.users import create_user
from arena.serve.services import ServeContext
from arena.serve.validator import ValidationService
from arena.store.db import Database
from arena.store.models_accounts import BotUpload, UploadStatus
from arena.submission.store import submit_version

from .serverkit import CRASH_BOT, GOOD_BOT


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    worker_home = (tmp_path / "worker-home").resolve()
    worker_home.mkdir()
    lc = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},  # no port 8787 warning
        silence_logs=logging.ERROR,
        env={"ARENA_HOME": str(worker_home)},
    )
    try:
        yield str(lc.scheduler_address), worker_home
    finally:
        lc.close()  # type: ignore[no-untyped-call]
        assert not wait_gone(str(worker_home / "artifacts"), 10.0)


def _final(db: Database, upload_id: int, timeout: float = 180.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with db.session() as session:
            row = session.get(BotUpload, upload_id)
            assert row is not None
            if row.status in (UploadStatus.ACTIVE, UploadStatus.REJECTED):
                return row.status
        time.sleep(0.3)
    raise AssertionError("validation did not end")


def test_validation_on_a_dask_cluster(sqlite_db: Database, cluster: tuple[str, Path]) -> None:
    address, worker_home = cluster
    user = create_user(sqlite_db, "dana", "a long password")
    good = submit_version(sqlite_db, user, "clustered", "clustered.py", GOOD_BOT.read_bytes() + b"# c\n")
    bad = submit_version(sqlite_db, user, "clashing", "crash_bot.py", CRASH_BOT.read_bytes())
    service = ValidationService(ServeContext(sqlite_db, cluster=address, log=lambda _line: None))
    service.start()
    try:
        assert _final(sqlite_db, good.upload.id or 0) == UploadStatus.ACTIVE
        assert _final(sqlite_db, bad.upload.id or 0) == UploadStatus.REJECTED
    finally:
        service.stop()
    assert service.error is None
    # the uploaded file travelled to the worker's own data folder: the matches ran there
    assert (worker_home / "artifacts" / good.version.sha256 / "clustered.py").is_file()
