"""Batched result writes (issue 20): the coordinator writes the results one wait returns in one
transaction, marks the matches it hands out together in one, and stays exact after kill -9 with
the ladder's incremental ratings in the same transaction (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlmodel import col, select

from arena.ladder.ratings import beliefs, rate_in_session
from arena.ratings.incremental import fold
from arena.referee import MatchResult
from arena.referee.fakechannel import FakeTable, greedy
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import MatchSeat
from arena.store.models_ladder import LadderRatingHistory
from arena.store.tournaments import (
    UnknownMatchError,
    load_replay,
    pack_replay,
    record_result,
    record_results,
)
from arena.tournament.runner import coordinate, open_run
from arena.tournament.service import create
from arena.tournament.task import MatchTask
from store.helpers import match_rows, status_counts_plain

HERE = Path(__file__).resolve().parent
GREEDY = HERE.parents[1] / "bots" / "greedy_bot.py"


def _results(count: int) -> list[MatchResult]:
    async def play() -> list[MatchResult]:
        return [await FakeTable(4, seed=seed).play([greedy] * 4) for seed in range(count)]

    return asyncio.run(play())


RESULTS = _results(6)


def _tournament(db: Database, games: int) -> int:
    names = [f"greedy{k}" for k in range(4)]
    for name in names:
        add_bot(db, name, GREEDY)
    t = create(db, names, table_sizes=(4,), games=games, seed=7, move_time=5, bank=30)
    assert t.id is not None
    return t.id


class InstantExecutor:
    """Every match answered at once from RESULTS (by its match id), ``inflight`` at a time."""

    def __init__(self, inflight: int) -> None:
        self.inflight = inflight

    def slots(self) -> int:
        return self.inflight

    def submit(self, task: MatchTask) -> Hashable:
        return task.match_id

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Any]]:
        return [(h, RESULTS[int(str(h)) % len(RESULTS)]) for h in handles]

    def restart(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_results_of_one_wait_are_one_transaction(db: Database) -> None:
    """64 matches, 16 in flight at once (one per seed: the seatings of a seed are played one
    after another): a handful of commits, not two per match; every match stored exactly as
    one-at-a-time writes store it (seats, replay)."""
    tid = _tournament(db, 16)  # 16 seeds x 4 rotations
    tasks = open_run(db, tid)
    assert len(tasks) == 64
    commits: list[int] = []

    def count(conn: object) -> None:
        commits.append(1)

    event.listen(db.engine, "commit", count)
    try:
        coordinate(db, tid, tasks, InstantExecutor(16))
    finally:
        event.remove(db.engine, "commit", count)
    rows = match_rows(db, tid)
    assert [r["status"] for r in rows] == ["finished"] * 64
    assert len(commits) < 16, f"{len(commits)} commits for 64 results: not batched"
    for r in rows:
        result = RESULTS[int(r["id"]) % len(RESULTS)]
        assert r["replays"] == 1
        assert load_replay(db, int(r["id"])) == result.replay
        assert list(r["placings"]) == [s.placing for s in result.seats]
        assert list(r["scores"]) == [s.score for s in result.seats]


def test_batch_skips_finished_and_repeated_matches(db: Database) -> None:
    tid = _tournament(db, 1)
    ids = [int(t.match_id) for t in open_run(db, tid)]
    a, b, c = ids[:3]
    assert record_result(db, b, RESULTS[1])
    packed = pack_replay(RESULTS[2])
    assert record_results(db, [(a, RESULTS[0]), (b, RESULTS[0]), (a, RESULTS[3]), (c, packed)]) == [
        True, False, False, True
    ]  # fmt: skip
    assert load_replay(db, a) == RESULTS[0].replay  # the first result of a match counts
    assert load_replay(db, b) == RESULTS[1].replay  # an already finished match is left as it was
    assert load_replay(db, c) == RESULTS[2].replay  # a worker-packed replay is stored as packed
    assert record_results(db, []) == []


def test_unknown_match_writes_nothing(db: Database) -> None:
    tid = _tournament(db, 1)
    first = int(open_run(db, tid)[0].match_id)
    with pytest.raises(UnknownMatchError, match="no match 999999"):
        record_results(db, [(first, RESULTS[0]), (999999, RESULTS[1])])
    assert [r["status"] for r in match_rows(db, tid)].count("finished") == 0


def _check_exact(db: Database, tid: int) -> int:
    """Each match wholly finished (seats, replay) or not at all; each finished match rated
    exactly once; the stored ratings are the fold of the rated matches in rating order."""
    rows = match_rows(db, tid)
    done = {int(r["id"]): r for r in rows if r["status"] == "finished"}
    for r in rows:
        finished = r["status"] == "finished"
        assert (r["replays"] == 1) == finished, r
        assert all(p is not None for p in r["placings"]) == finished, r
    with db.session() as session:
        history = session.exec(
            select(LadderRatingHistory)
            .where(LadderRatingHistory.tournament_id == tid)
            .order_by(col(LadderRatingHistory.id))
        ).all()
        placing = {(s.match_id, s.bot_version_id): s.placing for s in session.exec(select(MatchSeat)).all()}
    per_match: dict[int, int] = {}
    for h in history:
        per_match[h.match_id] = per_match.get(h.match_id, 0) + 1
        assert placing[(h.match_id, h.bot_version_id)] == h.placing
    assert sorted(per_match) == sorted(done), "a finished match unrated, or an unfinished one rated"
    assert set(per_match.values()) <= {4}, "a match rated twice"
    order = list(dict.fromkeys(h.match_id for h in history))
    expected = fold((done[m]["versions"], done[m]["placings"]) for m in order)
    got = beliefs(db, tid)
    assert set(got) == set(expected)
    for vid, b in expected.items():
        assert abs(got[vid].mu - b.mu) < 1e-9 and abs(got[vid].sigma - b.sigma) < 1e-9
        assert got[vid].games == b.games
    return len(done)


def _writer(url: str, tid: int, paced: bool = True) -> subprocess.Popen[str]:
    """The writer process; ``paced``: 8 results per wait, each wait 0.05 s (so at least 0.5 s of
    the run remains after 160 results: a kill after the target lands mid-run on any machine; an
    unpaced writer wrote all 240 before the kill once, on a fast one)."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1])}
    pace = ["8", "0.05"] if paced else []
    return subprocess.Popen(
        [sys.executable, str(HERE / "batch_writer.py"), url, str(tid), *pace],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip


def test_batched_rated_writes_exact_after_kill_9(backend: str, db_url: str) -> None:
    """A coordinator absorbing batches of results with their rating updates, killed with kill -9
    twice mid-run: after each kill every match is finished and rated exactly once or not at all;
    resumed, all are, and the ratings are the fold of the results."""
    db = Database(db_url)
    tid = _tournament(db, 60)  # 240 matches
    total = len(match_rows(db, tid))
    db.close()
    rng = random.Random(f"batched-{backend}")
    for target in (rng.randint(5, 60), rng.randint(100, 160)):
        proc = _writer(db_url, tid)
        try:
            deadline = time.monotonic() + 120
            while status_counts_plain(db_url, tid).get("finished", 0) < target:
                if proc.poll() is not None:
                    out = proc.stdout.read() if proc.stdout else ""
                    raise AssertionError(f"the writer ended early: {out}")
                assert time.monotonic() < deadline, "no progress within 120 s"
                time.sleep(0.005)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        db = Database(db_url)
        finished = _check_exact(db, tid)
        db.close()
        assert target <= finished < total
    proc = _writer(db_url, tid, paced=False)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    db = Database(db_url)
    assert _check_exact(db, tid) == total
    db.close()


def test_rated_batch_in_process(db: Database) -> None:
    """The after hook runs per match, in order, in the batch's transaction: ratings are the fold."""
    tid = _tournament(db, 2)
    tasks = open_run(db, tid)

    def recorder(d: Database, items: Sequence[tuple[int, MatchResult]]) -> list[bool]:
        return record_results(d, items, after=rate_in_session)

    coordinate(db, tid, tasks, InstantExecutor(8), batch_recorder=recorder)
    assert _check_exact(db, tid) == 8
