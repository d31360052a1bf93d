"""One coordinator per tournament at a time, on SQLite and on PostgreSQL: a second one is told
who holds the lease and exits 1 (or waits with ``--wait``); a dead holder's lease is taken over;
a result written twice is ignored, never fatal."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from store.helpers import match_rows, run_cli, sample

from arena.lifecycle import ProcessRef, process_host
from arena.referee import MatchResult
from arena.referee.result import SeatOutcome
from arena.store.bots import add_bot, resolve_version
from arena.store.db import Database
from arena.store.lease import Lease, LeaseHeldError, LeaseLostError, lease_holder
from arena.store.models import CoordinatorLease, Match, Replay, Tournament, utcnow
from arena.store.tournaments import add_match, record_result
from arena.tournament.cluster import run_tournament_on_cluster

from .helpers import create, start, wait_for_finished, wait_until

# ---------------------------------------------------------------------- the lease itself


def _tournament(db: Database) -> int:
    with db.session() as session:
        t = Tournament(name="t", format="round-robin", table_sizes="2", games=1, seed=1, move_time=1, bank=1)
        session.add(t)
        session.flush()
        assert t.id is not None
        return t.id


def _plant(db: Database, tid: int, *, host: str, pid: int, pid_start: int | None, expires_in: float) -> None:
    """A lease row as another coordinator would have left it."""
    now = utcnow()
    with db.session() as session:
        session.add(
            CoordinatorLease(
                tournament_id=tid,
                token="someone-else",
                host=host,
                pid=pid,
                pid_start=pid_start,
                acquired_at=now - timedelta(seconds=60),
                heartbeat_at=now - timedelta(seconds=1),
                expires_at=now + timedelta(seconds=expires_in),
            )
        )


def test_a_live_holder_keeps_the_lease(db: Database) -> None:
    tid = _tournament(db)
    first = Lease(db, tid)
    first.acquire()
    try:
        with pytest.raises(LeaseHeldError) as held:
            Lease(db, tid).acquire()
        assert f"pid {os.getpid()} on host {process_host()}" in str(held.value)
        assert f"'arena tournament resume {tid} --wait'" in str(held.value)
        holder = lease_holder(db, tid)
        assert holder is not None and holder.pid == os.getpid()
    finally:
        first.release()
    assert lease_holder(db, tid) is None  # released: the next one gets it at once
    second = Lease(db, tid)
    second.acquire()
    second.release()


def test_a_database_away_is_one_log_line(
    db: Database, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A heartbeat or a release that the database refuses (locked past its wait, a restarted
    server) is logged as the driver's one line: it was SQLAlchemy's text, with the SQL and a
    link on lines of their own, in the middle of a run's output (an outside review)."""

    def away(*_args: object) -> None:
        raise OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked"))

    tid = _tournament(db)
    lease = Lease(db, tid, heartbeat=0.05)
    lease.acquire()
    with caplog.at_level(logging.WARNING, logger="arena.store.lease"):
        monkeypatch.setattr(lease, "renew", away)
        deadline = time.monotonic() + 10
        while not any("heartbeat failed" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, "no heartbeat failed"
            time.sleep(0.05)
        monkeypatch.setattr(db, "session", away)
        lease.release()
    said = [r.getMessage() for r in caplog.records if r.name == "arena.store.lease"]
    assert f"tournament {tid}: lease heartbeat failed: database is locked" in said, said
    assert f"tournament {tid}: could not release the lease: database is locked" in said, said
    assert not any("\n" in line for line in said), said


def test_a_dead_holder_on_this_host_is_taken_over(db: Database) -> None:
    tid = _tournament(db)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    ref = ProcessRef.of(gone.pid)
    gone.wait()
    _plant(db, tid, host=process_host(), pid=ref.pid, pid_start=ref.start or 1, expires_in=3600)
    lease = Lease(db, tid)
    lease.acquire()  # not expired for an hour, but its holder is gone from this host
    try:
        assert lease.takeover is not None and lease.takeover.pid == ref.pid
    finally:
        lease.release()


def test_a_pid_reused_by_another_process_is_not_the_holder(db: Database) -> None:
    tid = _tournament(db)
    me = ProcessRef.of(os.getpid())
    assert me.start is not None
    _plant(db, tid, host=process_host(), pid=me.pid, pid_start=me.start - 1, expires_in=3600)
    lease = Lease(db, tid)
    lease.acquire()
    lease.release()


def test_another_hosts_lease_holds_until_it_expires(db: Database) -> None:
    tid = _tournament(db)
    _plant(db, tid, host="elsewhere.example", pid=1, pid_start=None, expires_in=3600)
    with pytest.raises(LeaseHeldError, match=r"pid 1 on host elsewhere\.example"):
        Lease(db, tid).acquire()
    with db.session() as session:
        row = session.get(CoordinatorLease, tid)
        assert row is not None
        row.expires_at = utcnow() - timedelta(seconds=1)  # its heartbeats stopped long ago
        session.add(row)
    lease = Lease(db, tid)
    lease.acquire()
    try:
        assert lease.takeover is not None and lease.takeover.host == "elsewhere.example"
    finally:
        lease.release()


def test_a_lease_taken_over_stops_its_former_holder(db: Database) -> None:
    tid = _tournament(db)
    lease = Lease(db, tid, heartbeat=3600)
    lease.acquire()
    try:
        assert lease.renew()
        lease.check()
        with db.session() as session:  # what a coordinator that took it over writes
            row = session.get(CoordinatorLease, tid)
            assert row is not None
            row.token, row.host, row.pid = "usurper", "elsewhere.example", 4242
            session.add(row)
        assert not lease.renew()
        with pytest.raises(LeaseLostError, match=r"taken over by pid 4242 on host elsewhere\.example"):
            lease.check()
    finally:
        lease.release()
    holder = lease_holder(db, tid)  # releasing a lost lease leaves the new holder's row alone
    assert holder is not None and holder.pid == 4242


def test_the_cluster_coordinator_takes_the_lease_too(db: Database) -> None:
    """Checked before the scheduler is even contacted (nothing listens at that address)."""
    tid = _tournament(db)
    lease = Lease(db, tid)
    lease.acquire()
    try:
        with pytest.raises(LeaseHeldError, match=f"pid {os.getpid()}"):
            run_tournament_on_cluster(db, tid, "tcp://127.0.0.1:9")
    finally:
        lease.release()


# ---------------------------------------------------------------------- idempotent results


def _a_match(db: Database) -> int:
    for name in ("greedy", "random"):
        add_bot(db, name, sample(name))
    ids = [resolve_version(db, name).id for name in ("greedy", "random")]
    return add_match(db, _tournament(db), 7, "g", [int(i) for i in ids if i is not None])


def _result(mid: int, scores: tuple[int, int], replay: str) -> MatchResult:
    seats = tuple(
        SeatOutcome(s, name, scores[s], 1 if scores[s] >= max(scores) else 2, "normal", "", 0.1, 0.1, 3)
        for s, name in enumerate(("greedy", "random"))
    )
    return MatchResult(f"m{mid}", 7, 2, "normal", seats, replay)


def test_a_second_result_for_a_match_is_ignored(db: Database) -> None:
    mid = _a_match(db)
    assert record_result(db, mid, _result(mid, (30, 20), '{"first": 1}\n')) is True
    assert record_result(db, mid, _result(mid, (10, 40), '{"second": 1}\n')) is False
    with db.session() as session:
        replay = session.get(Replay, mid)
        assert replay is not None and replay.size == len('{"first": 1}\n')
        m = session.get(Match, mid)
        assert m is not None and m.status == "finished"


def test_two_writers_of_one_result_at_once(db: Database) -> None:
    """Two coordinators' connections record the same match at the same moment: one writes it,
    the other is told it was a duplicate; no unique-key violation escapes."""
    mid = _a_match(db)
    barrier = threading.Barrier(2)
    outcomes: list[object] = []

    def write(k: int) -> None:
        other = Database(db.url)  # a connection pool of its own, as another process would have
        try:
            barrier.wait()
            outcomes.append(record_result(other, mid, _result(mid, (30 + k, 20), f'{{"writer": {k}}}\n')))
        except Exception as exc:
            outcomes.append(exc)
        finally:
            other.close()

    threads = [threading.Thread(target=write, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes, key=repr) == [False, True], outcomes
    with db.session() as session:
        assert len(session.exec(Replay.__table__.select()).all()) == 1  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- two coordinators


def test_a_second_coordinator_is_refused_or_waits(
    backend: str, db_url: str, arena_home: Path, tmp_path: Path
) -> None:
    """``start``, then ``resume`` while it runs: the second exits 1 naming the first; a third
    with ``--wait`` waits for the first to finish and then finds nothing left to play.  Every
    match is played exactly once."""
    games = 2
    tid = create(db_url, arena_home, sandbox=False, games=games)
    first = start(arena_home, db_url, tmp_path / "first.log", "tournament", "start", str(tid), "--jobs", "2")
    waiter = None
    try:
        wait_for_finished(first, db_url, tid, finished=1)
        # frozen meanwhile, so that it is surely still running (its lease lasts 30 s unrenewed)
        os.kill(first.proc.pid, signal.SIGSTOP)
        second = run_cli(arena_home, db_url, "tournament", "resume", str(tid), "--jobs", "2", code=1)
        assert f"tournament {tid} is being run by another coordinator: pid {first.proc.pid} on host" in (
            second.stderr
        ), second.stderr
        assert "duplicate key" not in second.stderr
        assert "matches done" not in second.stderr, second.stderr  # no progress of a run not started
        waiter = start(
            arena_home,
            db_url,
            tmp_path / "waiter.log",
            "tournament",
            "resume",
            str(tid),
            "--jobs",
            "2",
            "--wait",
        )
        wait_until(lambda: "waiting for tournament" in waiter.output(), 60, "the third one to wait")
        assert waiter.proc.poll() is None, waiter.output()
        os.kill(first.proc.pid, signal.SIGCONT)
        assert first.wait(timeout=240) == 0, first.output()
        assert waiter.wait(timeout=120) == 0, waiter.output()
    finally:
        for run in (first, waiter):
            if run is not None and run.proc.poll() is None:
                run.proc.kill()
                run.proc.wait()
    assert f"waiting for tournament {tid}, which is run by pid {first.proc.pid}" in waiter.output()
    assert f"matches: {6 * games} finished" in waiter.output()
    db = Database(db_url)
    rows = match_rows(db, tid)
    db.close()
    assert len(rows) == 6 * games
    assert all(r["status"] == "finished" and r["attempts"] == 1 and r["replays"] == 1 for r in rows), [
        (r["ordinal"], r["status"], r["attempts"]) for r in rows if r["attempts"] != 1
    ]
