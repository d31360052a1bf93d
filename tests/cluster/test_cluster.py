"""Tournaments on a real local Dask cluster: the same results as a local run, artifacts sent once
per worker, a worker killed mid-run, a late duplicate result ignored."""

from __future__ import annotations

import os
import shutil
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from distributed import Client

from arena.engine import replay, scores
from arena.referee import MatchResult
from arena.store.bots import sha256_file
from arena.store.db import Database
from arena.store.tournaments import load_replay
from arena.tournament.cluster import DaskExecutor, artifacts_of, release_bots, run_tournament_on_cluster
from arena.tournament.runner import Progress, coordinate, open_run, record

from .helpers import BOTS, REPO, TOTAL, match_rows, outcome, setup_tournament

SHAS = {sha256_file(REPO / "bots" / f"{name}_bot.py"): f"{name}_bot.py" for name in BOTS}


def _check_once(db: Database, tid: int, reference: list[tuple[Any, ...]]) -> None:
    """Every match finished exactly once, with one replay that re-plays, as in the local run."""
    rows = match_rows(db, tid)
    assert outcome(rows) == reference
    for r in rows:
        assert r["status"] == "finished" and r["replays"] == 1 and r["attempts"] == 1, r
        rep = replay(load_replay(db, r["id"]))
        assert tuple(scores(rep.final)) == r["scores"]


def test_same_results_as_a_local_run_sandboxed(
    client: Client, db: Database, reference: list[tuple[Any, ...]], worker_home: Path
) -> None:
    shutil.rmtree(worker_home / "artifacts", ignore_errors=True)  # the workers hold no bot yet
    tid = setup_tournament(db, sandbox=True)
    results: dict[int, MatchResult] = {}

    def progress(p: Progress) -> None:
        if p.last is None:  # the run's start
            assert p.task is None and p.done == 0
            return
        assert p.task is not None
        results[p.task.match_id] = p.last

    stats = run_tournament_on_cluster(db, tid, client, progress=progress)
    _check_once(db, tid, reference)
    assert len(results) == TOTAL
    assert len(stats.workers) == 2, stats  # both worker processes played

    # the artifacts went to each worker once, and sit verified in its cache
    workers = set(client.nthreads())
    assert Counter(stats.uploads) == {(w, sha): 1 for w in workers for sha in SHAS}
    for sha, name in SHAS.items():
        assert sha256_file(worker_home / "artifacts" / sha / name) == sha

    # another tournament on the same workers sends nothing
    tid2 = setup_tournament(db, sandbox=True, games=1, seed=21)
    again = run_tournament_on_cluster(db, tid2, client)
    assert again.uploads == []
    assert all(r["status"] == "finished" for r in match_rows(db, tid2))

    # a late or duplicate result of a finished match is a no-op
    before = match_rows(db, tid)
    mid, result = next(iter(results.items()))
    assert record(db, mid, result) is False
    assert match_rows(db, tid) == before


def test_a_killed_worker_loses_nothing(
    client: Client, db: Database, reference: list[tuple[Any, ...]]
) -> None:
    tid = setup_tournament(db, sandbox=False)
    pids: dict[str, int] = client.run(os.getpid)
    killed: list[int] = []

    def progress(p: Progress) -> None:
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys and w in pids]
        if busy:  # a worker in the middle of a match: SIGKILL it
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(pids[busy[0]])

    run_tournament_on_cluster(db, tid, client, progress=progress)
    assert killed
    _check_once(db, tid, reference)
    client.wait_for_workers(2, timeout=120)  # the nanny started a new worker process
    assert killed[0] not in client.run(os.getpid).values()


def test_a_worker_without_the_artifacts_gets_them_with_its_first_match(
    client: Client, db: Database, worker_home: Path
) -> None:
    """Workers that joined after the start report missing artifacts; they are sent, once."""
    shutil.rmtree(worker_home / "artifacts", ignore_errors=True)
    tid = setup_tournament(db, sandbox=False, games=1)
    tasks = open_run(db, tid)
    executor = DaskExecutor(client, artifacts_of(db, tasks))  # no sync_artifacts(): nothing sent
    try:
        coordinate(db, tid, tasks, executor)
    finally:
        client.run(release_bots)
    rows = match_rows(db, tid)
    assert [r["status"] for r in rows] == ["finished"] * len(rows)
    assert executor.stats.requeued["artifacts missing"] >= 1
    assert max(Counter(executor.stats.uploads).values()) == 1
    assert {sha for _w, sha in executor.stats.uploads} == set(SHAS)
