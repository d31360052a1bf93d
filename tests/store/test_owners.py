"""A stand-alone match whose process was killed outright is marked failed, not left `running`
for good (arena/store/owners.py): the next stand-alone match stored (or `arena serve` starting)
finds its process gone from this host and records why.  A match whose process still runs, one
owned by another host and a tournament's match are left alone.  Real processes, real `kill -9`,
SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlmodel import select

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match, MatchOwner, MatchStatus
from arena.store.owners import reap_abandoned
from arena.store.tournaments import add_match
from store.helpers import ARENA, SLEEPY_BOT, arena_env, bot_copy, run_cli

STORE_AND_DIE = """
import os, sys
from arena.store.db import Database
from arena.store.tournaments import add_match
db = Database(sys.argv[1])
print(add_match(db, None, 7, "ad-hoc", [int(sys.argv[2])]), flush=True)
os._exit(0)  # gone without recording the match's end, as after kill -9
"""


def _status(db: Database, match_id: int) -> tuple[str, str | None]:
    with db.session() as session:
        m = session.get(Match, match_id)
        assert m is not None
        return m.status, m.error


def test_a_match_whose_process_is_gone_is_failed_and_the_others_are_left(
    db: Database, db_url: str, tmp_path: Path
) -> None:
    vid = add_bot(db, "g", bot_copy(tmp_path, "g")).id
    assert vid is not None
    out = subprocess.run(
        [sys.executable, "-c", STORE_AND_DIE, db_url, str(vid)], capture_output=True, text=True, check=True
    )
    dead = int(out.stdout)
    mine = add_match(db, None, 8, "ad-hoc", [vid])  # this process: alive; storing it reaped `dead`
    status, error = _status(db, dead)
    assert status == MatchStatus.FAILED
    assert error is not None and error.startswith("abandoned: the process that played it (pid ")
    assert _status(db, mine) == (MatchStatus.RUNNING, None)
    with db.session() as session:  # one on another host: this host cannot tell, so it is left
        elsewhere = add_match(db, None, 9, "ad-hoc", [vid])
        owner = session.get(MatchOwner, elsewhere)
        assert owner is not None
        owner.host = "another-host.example"
        session.add(owner)
    assert reap_abandoned(db) == []
    assert _status(db, elsewhere)[0] == MatchStatus.RUNNING
    with db.session() as session:  # the owner rows of matches no longer running are gone
        owned = set(session.exec(select(MatchOwner.match_id)).all())
    assert owned == {mine, elsewhere}


def _start_long_match(
    home: Path, url: str, tmp_path: Path, db: Database
) -> tuple[subprocess.Popen[bytes], int]:
    """An `arena match` of the 50-ms bot (some seconds long), once its match is stored."""
    bot = tmp_path / "sleepy_bot.py"
    bot.write_text(SLEEPY_BOT)
    proc = subprocess.Popen(
        [str(ARENA), "match", str(bot), "random", "--seed", "5", "--no-sandbox"],
        env=arena_env(home, url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=home,
    )
    deadline = time.monotonic() + 60
    running: list[int] = []
    while not running and time.monotonic() < deadline:
        time.sleep(0.2)
        with db.session() as session:
            running = [m.id for m in session.exec(select(Match)).all() if m.id is not None]
    assert running, "arena match did not store its match"
    return proc, running[0]


def test_a_match_of_another_pid_namespace_is_left_alone(sqlite_url: str, tmp_path: Path) -> None:
    """A container sharing the host name and the data folder, but not the pids: a match stored
    there (`unshare --pid`) does not take this namespace's running match for abandoned."""
    home = tmp_path / "data"
    home.mkdir()
    db = Database(sqlite_url)
    proc, running = _start_long_match(home, sqlite_url, tmp_path, db)
    try:
        other = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc",
             str(ARENA), "match", "greedy", "random", "--seed", "6", "--no-sandbox"],
            env=arena_env(home, sqlite_url), capture_output=True, text=True, timeout=120, cwd=home,
        )  # fmt: skip
        assert other.returncode == 0, other.stderr
        assert proc.poll() is None, "the long match ended before the check"
        assert _status(db, running) == (MatchStatus.RUNNING, None)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        db.close()


def test_arena_match_killed_with_sigkill_is_failed_by_the_next_match(sqlite_url: str, tmp_path: Path) -> None:
    home = tmp_path / "data"
    home.mkdir()
    db = Database(sqlite_url)
    proc, killed = _start_long_match(home, sqlite_url, tmp_path, db)
    try:
        time.sleep(1.0)  # mid-match
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert _status(db, killed)[0] == MatchStatus.RUNNING  # nothing was left to record it
        run_cli(home, sqlite_url, "match", "greedy", "random", "--seed", "6", "--no-sandbox")
        status, error = _status(db, killed)
        assert status == MatchStatus.FAILED
        assert error is not None and f"pid {proc.pid}" in error and "killed?" in error
        listed = run_cli(home, sqlite_url, "replays", "list").stdout
        assert "running" not in listed, listed
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        db.close()
