"""Fault injection into the arena itself: its worker processes, its coordinator, its disk and its
database connection fail in the middle of a sandboxed tournament.

The property every test checks (:func:`assert_consistent`): a match in the database is either
wholly finished (status, every seat's result and a replay that verifies through the engine and
agrees with the seats) or not finished at all (queued, running or failed, with no result and
no replay); and once the fault is gone, the tournament completes with every match finished
exactly once.  Every tournament runs with the sandbox on and the escaper bot in the field, whose
``setsid()`` grandchild must not outlive anything either.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from sqlmodel import Session, col, select

from arena.engine import replay
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match, MatchSeat, Replay
from arena.store.tournaments import compress_replay
from arena.tournament.service import create

from .conftest import LIMITS
from .helpers import (
    BOTS,
    FAULTY,
    cgroup_dirs_made_by,
    children,
    cmdline,
    kill_all,
    processes_with,
    wait_gone,
)

ARENA = Path(sys.executable).parent / "arena"
FIELD = {
    "greedy": BOTS / "greedy_bot.py",
    "invader": BOTS / "invader_bot.py",
    "escaper": FAULTY / "escaper_bot.py",
}
GAMES = 2  # 3 tables of 2 x 2 seeds x 2 rotations
TOTAL = 12
PG_ENV = "ARENA_TEST_POSTGRES_URL"


# ---------------------------------------------------------------------- set-up and checks


@dataclass
class Arena:
    """A private ARENA_HOME (and database URL) with a created, not yet started tournament."""

    home: Path
    url: str
    tid: int

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["ARENA_HOME"] = str(self.home)
        env["ARENA_DATABASE_URL"] = self.url
        env.pop("COLUMNS", None)
        return env

    def start(self, command: str, log: Path) -> subprocess.Popen[bytes]:
        """``arena tournament COMMAND ID --jobs 2`` in a process group of its own."""
        with log.open("wb") as out:
            return subprocess.Popen(
                [str(ARENA), "tournament", command, str(self.tid), "--jobs", "2"],
                env=self.env(),
                cwd=self.home,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def run(self, command: str, log: Path, timeout: float = 180) -> tuple[int, str]:
        proc = self.start(command, log)
        try:
            code = proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return code, log.read_text(errors="replace")

    def markers(self) -> list[str]:
        return [str(self.home / "artifacts")]


def make_arena(home: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> Arena:
    """Register the field (artifacts under ``home``) and create a sandboxed round robin."""
    monkeypatch.setenv("ARENA_HOME", str(home))
    db = Database(url)
    try:
        for name, path in FIELD.items():
            add_bot(db, name, path)
        t = create(db, list(FIELD), games=GAMES, seed=21, move_time=0.5, bank=2.0, sandbox=LIMITS)
        assert t.id is not None
        return Arena(home, url, t.id)
    finally:
        db.close()


def status_counts(url: str, tid: int) -> dict[str, int]:
    """Match statuses, read with a plain engine (no migration, no write lock)."""
    engine = create_engine(url)
    try:
        with Session(engine) as session:
            out: dict[str, int] = {}
            for status in session.exec(select(Match.status).where(Match.tournament_id == tid)).all():
                out[status] = out.get(status, 0) + 1
            return out
    finally:
        engine.dispose()


def wait_for(proc: subprocess.Popen[bytes], url: str, tid: int, finished: int) -> dict[str, int]:
    """Poll until at least ``finished`` matches are finished while the run still goes on."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        counts = status_counts(url, tid)
        if counts.get("finished", 0) >= finished:
            assert counts.get("finished", 0) < TOTAL, f"the run finished before the fault: {counts}"
            return counts
        assert proc.poll() is None, f"the run ended early (exit {proc.returncode}) with {counts}"
        time.sleep(0.05)
    raise AssertionError(f"no progress within 120 s: {status_counts(url, tid)}")


def assert_consistent(url: str, tid: int) -> dict[int, dict[str, Any]]:
    """Every match wholly finished (seats + a verifying replay that agrees with them) or not at
    all; returns the matches by id (status, attempts, replay sha256)."""
    engine = create_engine(url)
    try:
        with Session(engine) as session:
            matches = session.exec(select(Match).where(Match.tournament_id == tid)).all()
            assert len(matches) == TOTAL
            out = {}
            for m in matches:
                assert m.id is not None
                seats = session.exec(
                    select(MatchSeat).where(MatchSeat.match_id == m.id).order_by(col(MatchSeat.seat))
                ).all()
                stored = session.get(Replay, m.id)
                if m.status == "finished":
                    assert stored is not None, f"finished match {m.id} has no replay"
                    text = zlib.decompress(stored.data).decode()
                    assert compress_replay(text)[1] == stored.sha256
                    rep = replay(text)  # raises unless it re-plays through the engine
                    assert rep.header["match"] == f"t{tid}-m{m.id}"
                    assert [s.score for s in seats] == rep.result["scores"], m.id
                    assert [s.placing for s in seats] == rep.result["placings"], m.id
                    assert all(s.termination and s.decisions is not None for s in seats), seats
                    assert m.termination == rep.result["termination"]
                else:
                    assert m.status in ("queued", "running", "failed"), m.status
                    assert stored is None, f"unfinished match {m.id} has a replay"
                    assert all(s.score is None and s.placing is None and s.termination is None for s in seats)
                out[m.id] = {
                    "status": m.status,
                    "attempts": m.attempts,
                    "sha": stored.sha256 if stored else None,
                }
            return out
    finally:
        engine.dispose()


def assert_all_finished_once(url: str, tid: int) -> dict[int, dict[str, Any]]:
    rows = assert_consistent(url, tid)
    assert all(r["status"] == "finished" for r in rows.values()), rows
    engine = create_engine(url)
    try:
        with Session(engine) as session:
            replays = session.exec(select(Replay.match_id).where(col(Replay.match_id).in_(list(rows)))).all()
    finally:
        engine.dispose()
    assert sorted(replays) == sorted(rows)  # one replay per match, none twice
    return rows


def assert_no_bot_left(arena: Arena) -> None:
    left = wait_gone(arena.markers(), timeout=8.0)
    kill_all(left)
    assert not left, f"bot processes survived: {left}"


@pytest.fixture
def sqlite_arena(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Arena]:
    home = tmp_path / "home"
    home.mkdir()
    arena = make_arena(home, f"sqlite:///{home / 'arena.db'}", monkeypatch)
    yield arena
    assert_no_bot_left(arena)


# ---------------------------------------------------------------------- the faults


def test_a_killed_worker_loses_only_its_match(sqlite_arena: Arena, tmp_path: Path) -> None:
    """SIGKILL one worker process mid-match: the coordinator re-queues what was in flight,
    restarts its pool and completes the tournament with every match finished exactly once."""
    arena = sqlite_arena
    proc = arena.start("start", tmp_path / "start.log")
    try:
        wait_for(proc, arena.url, arena.tid, finished=2)
        workers = [p for p in children(proc.pid) if "spawn_main" in cmdline(p)]
        assert len(workers) == 2, [cmdline(p) for p in children(proc.pid)]
        busy = [w for w in workers if children(w)] or workers  # one with bots (bubblewrap) running
        os.kill(busy[0], signal.SIGKILL)
        code = proc.wait(timeout=180)
        later = [p for p in children(proc.pid) if "spawn_main" in cmdline(p)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = (tmp_path / "start.log").read_text(errors="replace")
    assert code == 0, output
    assert "Traceback" not in output
    assert f"matches: {TOTAL} finished" in output, output
    rows = assert_all_finished_once(arena.url, arena.tid)
    assert sum(r["attempts"] for r in rows.values()) > TOTAL, rows  # what was in flight ran again
    assert_no_bot_left(arena)
    # the dead pool's workers could not remove their bots' cgroups; the new pool swept them
    assert not later
    assert not cgroup_dirs_made_by(workers), cgroup_dirs_made_by(workers)


def test_killed_coordinator_resumes_with_nothing_left_behind(sqlite_arena: Arena, tmp_path: Path) -> None:
    """SIGKILL the whole ``arena tournament start`` process group mid-match: every sandboxed
    bot (the escaper's setsid() grandchild too) dies with it; ``resume`` completes the rest and
    keeps what was finished."""
    arena = sqlite_arena
    proc = arena.start("start", tmp_path / "start.log")
    try:
        wait_for(proc, arena.url, arena.tid, finished=2)
        assert processes_with(arena.markers()), "no bot was running mid-tournament"
        workers = [p for p in children(proc.pid) if "spawn_main" in cmdline(p)]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert_no_bot_left(arena)  # bubblewrap dies with its worker, and its PID namespace with it
    at_kill = assert_consistent(arena.url, arena.tid)
    assert any(r["status"] == "running" for r in at_kill.values()), at_kill

    code, output = arena.run("resume", tmp_path / "resume.log")
    assert code == 0, output
    assert f"matches: {TOTAL} finished" in output, output
    after = assert_all_finished_once(arena.url, arena.tid)
    for mid, r in at_kill.items():
        if r["status"] == "finished":  # kept as it was, not played again
            assert after[mid] == r, (mid, r, after[mid])
        else:
            assert after[mid]["attempts"] == r["attempts"] + 1
    assert workers and not cgroup_dirs_made_by(workers)  # the killed run's cgroups were swept


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (root only): the arena's whole data folder lives on it."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        left = wait_gone([str(mount)], timeout=5.0)
        kill_all(left)
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Fill the file system to the last byte; return the filler file."""
    filler = disk / "filler"
    chunk = b"\xff" * 4096
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(chunk)
        except OSError:
            pass
        try:
            while True:
                fh.write(b"\xff")
        except OSError:
            pass
    return filler


def test_full_disk_fails_loudly_and_resumes(
    tiny_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data folder (database, logs) fills up mid-tournament: the run stops with a clear
    error and a non-zero exit, records nothing partial, and resumes once there is space."""
    arena = make_arena(tiny_disk, f"sqlite:///{tiny_disk / 'arena.db'}", monkeypatch)
    proc = arena.start("start", tmp_path / "start.log")
    try:
        wait_for(proc, arena.url, arena.tid, finished=2)
        filler = fill(tiny_disk)
        code = proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = (tmp_path / "start.log").read_text(errors="replace")
    assert code != 0, f"the run went on with a full disk:\n{output}"
    assert "Traceback" not in output, output
    assert "error:" in output and "full" in output, output
    assert f"arena tournament resume {arena.tid}" in output, output
    assert_no_bot_left(arena)
    at_failure = assert_consistent(arena.url, arena.tid)
    assert any(r["status"] != "finished" for r in at_failure.values())

    filler.unlink()
    code, output = arena.run("resume", tmp_path / "resume.log")
    assert code == 0, output
    after = assert_all_finished_once(arena.url, arena.tid)
    for mid, r in at_failure.items():
        if r["status"] == "finished":
            assert after[mid] == r
    assert_no_bot_left(arena)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database (dropped afterwards)."""
    raw = os.environ.get(PG_ENV)
    if not raw:
        pytest.fail(f"{PG_ENV} is not set: run './dev test' (it starts PostgreSQL and sets it)")
    admin = make_url(raw)
    name = f"arena_adv_{secrets.token_hex(6)}"
    conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def terminator(url: str) -> Callable[[], int]:
    """A function that terminates every other backend connected to ``url``'s database."""
    u = make_url(url)
    conninfo = u.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    database = u.database

    def terminate() -> int:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            ).fetchall()
        return sum(1 for (ok,) in rows if ok)

    return terminate


def test_database_connection_drops(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL drops the coordinator's connections again and again mid-tournament: it
    reconnects (pool_pre_ping) and completes, or stops loudly; never a wrong or partial result;
    a resume completes whatever is left."""
    home = tmp_path / "home"
    home.mkdir()
    arena = make_arena(home, postgres_url, monkeypatch)
    terminate = terminator(postgres_url)
    proc = arena.start("start", tmp_path / "start.log")
    killed = 0
    try:
        wait_for(proc, arena.url, arena.tid, finished=1)
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:
            killed += terminate()
            time.sleep(0.4)
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = (tmp_path / "start.log").read_text(errors="replace")
    assert killed >= 1, "no connection of the coordinator was ever terminated"
    assert "Traceback" not in output, output
    assert_no_bot_left(arena)
    at_end = assert_consistent(arena.url, arena.tid)
    first = code
    if code != 0:  # it stopped loudly: it says so, and a resume completes the rest
        assert "error:" in output and f"arena tournament resume {arena.tid}" in output, output
        code, output = arena.run("resume", tmp_path / "resume.log")
        assert code == 0, output
    after = assert_all_finished_once(arena.url, arena.tid)
    for mid, r in at_end.items():
        if r["status"] == "finished":
            assert after[mid] == r
    assert_no_bot_left(arena)
    print(f"\n[pg] {killed} backends terminated; first run exit {first}")


def test_a_read_whose_connection_drops_mid_statement_is_read_again(postgres_url: str) -> None:
    """A connection PostgreSQL terminates *during* a statement (pre-ping cannot see that coming)
    fails the statement; :func:`arena.store.retry.retried` runs the read again on a fresh
    connection.  This is what let a finished tournament end in a traceback instead of its table
    (seen once in a clean-clone run of ``test_database_connection_drops``)."""
    import threading

    from sqlalchemy.exc import OperationalError

    from arena.store.retry import retried

    db = Database(postgres_url)
    terminate = terminator(postgres_url)
    calls: list[str] = []

    def read() -> int:
        with db.session() as session:
            if not calls:  # the first attempt is still running when its backend is terminated
                calls.append("slow")
                killer = threading.Timer(0.5, terminate)
                killer.start()
                try:
                    session.connection().exec_driver_sql("SELECT pg_sleep(10)")
                finally:
                    killer.join()
            calls.append("read")
            return len(session.exec(select(Match)).all())

    try:
        with pytest.raises(OperationalError):  # without the retry, the read fails
            calls.clear()
            read()
        calls.clear()
        assert retried(read, pause=0.1) == 0
        assert calls == ["slow", "read"]  # the first attempt failed, the second read the table
    finally:
        db.close()


def test_pool_pre_ping_reconnects(postgres_url: str) -> None:
    """The coordinator's database handle survives a connection the server dropped while it sat
    idle in the pool: the next session reconnects instead of failing."""
    db = Database(postgres_url)
    try:
        with db.session() as session:
            assert session.exec(select(Match)).all() == []
        assert terminator(postgres_url)() >= 1  # the pooled, idle connection is gone
        with db.session() as session:  # pre-ping notices, and a new connection is made
            assert session.exec(select(Match)).all() == []
    finally:
        db.close()


def test_a_pre_ping_that_fails_oddly_on_a_dropped_connection_still_reconnects(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server drops the pooled connection while the pre-ping's query is on its way: the ping
    failed with "connection socket closed" and SQLAlchemy's psycopg ping, restoring autocommit
    in its ``finally``, raised psycopg's ProgrammingError "can't change 'autocommit' now:
    connection in transaction status ACTIVE" instead, which is not a disconnect: the session
    failed (a clean-clone CI run of test_pool_pre_ping_reconnects).  Any error of a pre-ping
    means that connection is unusable: a new one is made.  The race is injected: the first ping
    of the really dropped connection fails as it did there, before psycopg has seen the drop (so
    the connection does not look closed yet); pings after it are real."""
    db = Database(postgres_url)
    try:
        with db.session() as session:
            assert session.exec(select(Match)).all() == []
        real_ping = db.engine.dialect.do_ping
        pinged: list[bool] = []

        def ping_as_in_the_race(dbapi_connection: Any) -> bool:
            pinged.append(bool(dbapi_connection.closed))
            if len(pinged) == 1:
                raise psycopg.ProgrammingError(
                    "can't change 'autocommit' now: connection in transaction status ACTIVE"
                )
            return bool(real_ping(dbapi_connection))

        monkeypatch.setattr(db.engine.dialect, "do_ping", ping_as_in_the_race)
        assert terminator(postgres_url)() >= 1
        with db.session() as session:
            assert session.exec(select(Match)).all() == []
        assert pinged == [False], pinged  # the dropped connection's ping failed; a new one was made
    finally:
        db.close()
