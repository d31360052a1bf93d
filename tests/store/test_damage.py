"""A damaged database: one clear message from every command, `arena db check` names what is
damaged, `arena replays verify --all` carries on over it, `arena db backup` copies a database
online (consistently, while a tournament writes) and restoring a backup repairs the damage.

Issue 12 item 3.  The damage is real: bytes of the SQLite file are overwritten or cut off.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from .damage import (
    Played,
    alter_first_throw,
    copy_to,
    damage_replay_bytes,
    garble_pages,
    overflow_page_of,
    page_size,
    pages_of,
    play,
    replay_text,
    store_text,
    unreadable_replays,
)
from .helpers import ARENA, arena_env, cli_inproc, run_cli, table_counts

pytestmark = pytest.mark.timeout(300)

ERROR = re.compile(r"^error: ", re.M)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """One real tournament, played once for the module; each test damages its own copy."""
    return play(tmp_path_factory.mktemp("played") / "home")


@pytest.fixture
def copy(played: Played, tmp_path: Path) -> Played:
    """A copy with 1 KB pages: each replay has overflow pages of its own (see ``copy_to``)."""
    return copy_to(played, tmp_path / "copy", page_bytes=1024)


def _cli(p: Played, *args: str, code: int | None, real: bool = False) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` on this copy: in this process (fast), or with ``real`` as the console script
    (what a user runs: stderr is checked for tracebacks)."""
    return (run_cli if real else cli_inproc)(p.home, p.url, *args, code=code)


def assert_clear_damage_message(proc: subprocess.CompletedProcess[str], p: Played) -> None:
    """Exit 1, no traceback, one ``error:`` line naming the file and saying what to do."""
    assert proc.returncode == 1, proc
    assert "Traceback" not in proc.stderr and "sqlalchemy" not in proc.stderr.lower(), proc.stderr
    assert len(ERROR.findall(proc.stderr)) == 1, proc.stderr
    message = proc.stderr[proc.stderr.index("error: ") :]
    assert f"the database {p.file} is damaged" in message, message
    assert "arena db check" in message and "arena db backup" in message, message
    assert f"delete {p.file}-wal" in message, message  # how to restore, without old WAL pages


# ---- arena db check --------------------------------------------------------------------------


def test_db_check_passes_a_healthy_database(copy: Played) -> None:
    proc = _cli(copy, "db", "check", code=0)
    assert f"database {copy.file}" in proc.stdout
    assert "integrity_check: ok" in proc.stdout
    assert "replays: 4 checked, 4 OK" in proc.stdout
    assert "no damage found" in proc.stdout


@pytest.mark.parametrize("how", ["stored-bytes", "edited-record"])
def test_db_check_names_a_damaged_replay(copy: Played, how: str) -> None:
    """One replay damaged on purpose: its stored bytes changed in the file (SQLite's page checks
    still pass), or its row rewritten with a record that no longer replays (a changed throw, with
    a matching hash).  `arena db check` names exactly that match and exits 1."""
    victim = copy.matches[1]
    if how == "stored-bytes":
        damage_replay_bytes(copy.file, victim)
        why = "stored replay damaged"
    else:
        text, line = alter_first_throw(replay_text(copy.file, victim))
        store_text(copy.file, victim, text)
        why = f"line {line} (event {line - 1})"
    proc = _cli(copy, "db", "check", code=1, real=True)
    assert "integrity_check: ok" in proc.stdout, proc.stdout  # the pages are fine, the replay is not
    failed = re.findall(r"^FAIL match (\d+): (.*)$", proc.stdout, re.M)
    assert [int(m) for m, _ in failed] == [victim], proc.stdout
    assert why in failed[0][1], failed
    assert f"replays: 4 checked, 3 OK, 1 damaged: match {victim}" in proc.stdout
    assert f"error: the database {copy.file} is damaged (1 replay is damaged)" in proc.stderr
    assert "Traceback" not in proc.stderr

    verify = _cli(copy, "replays", "verify", "--all", code=1)  # the same verdict from verify
    assert [int(m) for m in re.findall(r"^FAIL match (\d+):", verify.stdout, re.M)] == [victim]
    assert "verified 4 replays: 3 OK, 1 failed" in verify.stdout


def test_db_check_and_verify_name_matches_on_garbled_pages(copy: Played) -> None:
    """Garbage over a page of the replays table (one replay's overflow page): SQLite's check names
    the table, and both `arena db check` and `arena replays verify --all` name exactly the match
    whose replay cannot be read, verify every other one, and exit 1 at the end."""
    victim = copy.matches[2]
    garble_pages(copy.file, [overflow_page_of(copy.file, victim)])
    assert unreadable_replays(copy.file, copy.matches) == [victim]  # SQLite itself says so

    check = _cli(copy, "db", "check", code=1)
    assert "table replay" in check.stdout, check.stdout
    named = re.findall(r"^FAIL match (\d+): its rows in the database are damaged", check.stdout, re.M)
    assert [int(m) for m in named] == [victim], check.stdout
    assert f"replays: 4 checked, 3 OK, 1 damaged: match {victim}" in check.stdout
    assert "Traceback" not in check.stderr and len(ERROR.findall(check.stderr)) == 1

    verify = _cli(copy, "replays", "verify", "--all", code=1)
    assert [int(m) for m in re.findall(r"^FAIL match (\d+):", verify.stdout, re.M)] == [victim]
    assert "verified 4 replays: 3 OK, 1 failed" in verify.stdout
    assert "Traceback" not in verify.stderr


def test_db_check_reads_only(copy: Played) -> None:
    """The check changes nothing, and on a missing database it creates none."""
    before = copy.file.read_bytes()
    _cli(copy, "db", "check", code=0)
    assert copy.file.read_bytes() == before
    missing = copy.home / "nothing" / "arena.db"
    proc = run_cli(copy.home, f"sqlite:///{missing}", "db", "check", code=1)
    assert f"there is no database at {missing}" in proc.stderr
    assert not missing.parent.exists()


# ---- one clear message from every command ---------------------------------------------------

COMMANDS = [
    ("tournament", "list"),
    ("tournament", "show", "{t}"),
    ("leaderboard",),
    ("replays", "list"),
    ("tournament", "resume", "{t}", "--jobs", "1"),
    ("bots", "add", "again", "{bot}"),
]


def _fill(args: tuple[str, ...], p: Played) -> list[str]:
    bot = str(Path(__file__).resolve().parents[2] / "bots" / "random_bot.py")
    return [a.format(t=p.tournament, m=p.matches[0], bot=bot) for a in args]


@pytest.mark.parametrize("damage", ["truncated", "garbage-mid-file"])
def test_every_command_gives_one_clear_message(copy: Played, damage: str) -> None:
    """The issue's two damages: truncation (it cut ~160 KB to 40000 bytes; here to a quarter) and
    16 KB of garbage written mid-file, over the pages of the tables these commands read (matches
    and seats).  Reading and writing commands alike print one message naming the file and what
    to do, and exit 1; `replays verify --all` names the matches it cannot read and exits 1; a
    replay the garbage missed still shows."""
    if damage == "truncated":
        os.truncate(copy.file, copy.file.stat().st_size // 4)
    else:
        pages = pages_of(copy.file, "match") + pages_of(copy.file, "matchseat")
        assert len(pages) * page_size(copy.file) <= 16384, pages  # at most the 16 KB
        garble_pages(copy.file, pages)
    before = copy.file.read_bytes()
    for k, args in enumerate(COMMANDS):
        proc = _cli(copy, *_fill(args, copy), code=None, real=k == 0)
        assert_clear_damage_message(proc, copy)
    for args in (("replays", "show", str(copy.matches[0]), "--step", "1"), ("bots", "list")):
        proc = _cli(copy, *args, code=None)
        if damage == "truncated":
            assert_clear_damage_message(proc, copy)
        else:  # replays and bots live in tables the garbage missed: they still show
            assert proc.returncode == 0 and "greedy" in proc.stdout, proc
    verify = _cli(copy, "replays", "verify", "--all", code=None, real=True)
    assert verify.returncode == 1 and "Traceback" not in verify.stderr, verify
    if damage == "truncated":
        assert_clear_damage_message(verify, copy)
    else:  # every match's seats are unreadable: each match is named, none crashes the run
        named = [
            int(m)
            for m in re.findall(
                r"^FAIL match (\d+): its rows in the database are damaged", verify.stdout, re.M
            )
        ]
        assert named == copy.matches, verify.stdout
    assert copy.file.read_bytes() == before  # nobody wrote into the damaged file


def test_resume_refuses_a_damaged_file_before_writing(copy: Played) -> None:
    """Damage a reader never touches (one replay page) still stops a writer: opening for writing
    runs SQLite's quick_check first, so nothing is written into a damaged file."""
    garble_pages(copy.file, [overflow_page_of(copy.file, copy.matches[0])])
    _cli(copy, "tournament", "list", code=0)  # reading the tournaments still works
    before = copy.file.read_bytes()
    proc = _cli(copy, "tournament", "resume", str(copy.tournament), code=1)
    assert_clear_damage_message(proc, copy)
    assert copy.file.read_bytes() == before


# ---- backups -------------------------------------------------------------------------------


def test_backup_then_restore_repairs_damage(copy: Played, tmp_path: Path) -> None:
    backup = tmp_path / "saved.db"
    proc = _cli(copy, "db", "backup", str(backup), code=0)
    assert f"backed up {copy.file} to {backup}" in proc.stdout and "4 matches, 4 replays" in proc.stdout
    assert not Path(f"{backup}-wal").exists()  # one self-contained file
    conn = sqlite3.connect(backup)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    assert table_counts(f"sqlite:///{backup}") == table_counts(copy.url)

    again = _cli(copy, "db", "backup", str(backup), code=1)  # never overwritten by accident
    assert "exists" in again.stderr and "--force" in again.stderr
    _cli(copy, "db", "backup", str(backup), "--force", code=0)

    damage_replay_bytes(copy.file, copy.matches[0])
    _cli(copy, "db", "check", code=1)
    shutil.copyfile(backup, copy.file)  # the restore the message describes
    for suffix in ("-wal", "-shm"):
        Path(f"{copy.file}{suffix}").unlink(missing_ok=True)
    _cli(copy, "db", "check", code=0)
    _cli(copy, "replays", "verify", "--all", code=0)


def test_backup_of_a_damaged_database_is_refused(copy: Played, tmp_path: Path) -> None:
    garble_pages(copy.file, [overflow_page_of(copy.file, copy.matches[0])])
    backup = tmp_path / "saved.db"
    proc = _cli(copy, "db", "backup", str(backup), code=1)
    assert "damaged" in proc.stderr and "no backup written" in proc.stderr, proc.stderr
    assert not backup.exists() and list(tmp_path.glob(".saved.db.partial-*")) == []


def test_backup_is_consistent_while_a_tournament_writes(tmp_path: Path) -> None:
    """Back up again and again while `arena tournament run` records matches: every copy passes
    integrity_check and holds whole matches only (each finished match has its replay and every
    seat's result), and the counts only grow; the last copy equals the finished database."""
    home = tmp_path / "home"
    url = f"sqlite:///{home / 'arena.db'}"
    bots = Path(__file__).resolve().parents[2] / "bots"
    for name in ("greedy", "invader"):
        cli_inproc(home, url, "bots", "add", name, str(bots / f"{name}_bot.py"))
    log = (tmp_path / "run.log").open("w")
    proc = subprocess.Popen(
        [str(ARENA), "tournament", "run", "greedy", "invader", "--games", "4", "--seed", "5",
         "--no-sandbox", "--jobs", "2", "--move-time", "2"],
        env=arena_env(home, url), cwd=home, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    seen: list[int] = []
    try:
        k = 0
        while proc.poll() is None and k < 200:
            dest = tmp_path / f"b{k}.db"
            done = cli_inproc(home, url, "db", "backup", str(dest), code=None)
            if done.returncode == 0:
                conn = sqlite3.connect(dest)
                assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
                finished = conn.execute("SELECT COUNT(*) FROM match WHERE status = 'finished'").fetchone()[0]
                torn = conn.execute(
                    "SELECT COUNT(*) FROM match m WHERE m.status = 'finished' AND (NOT EXISTS "
                    "(SELECT 1 FROM replay r WHERE r.match_id = m.id) OR EXISTS (SELECT 1 FROM matchseat s "
                    "WHERE s.match_id = m.id AND s.placing IS NULL))"
                ).fetchone()[0]
                conn.close()
                assert torn == 0, f"backup {k} holds a half-recorded match"
                assert not seen or finished >= seen[-1]
                seen.append(finished)
            else:  # only acceptable failure: none (say what happened)
                raise AssertionError(done.stderr)
            k += 1
            time.sleep(0.1)
        assert proc.wait(timeout=240) == 0, (tmp_path / "run.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    # copies were taken while matches were being written
    assert len(seen) >= 3 and seen[0] < 8 and len(set(seen)) >= 2, seen
    final = tmp_path / "final.db"
    run_cli(home, url, "db", "backup", str(final))
    assert table_counts(f"sqlite:///{final}") == table_counts(url)


# ---- PostgreSQL ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["postgres"])
def test_postgres_check_names_a_damaged_replay_and_backup_advises_pg_dump(
    db_url: str, tmp_path: Path
) -> None:
    """On PostgreSQL `arena db check` verifies every replay (the server checks its own pages) and
    names a damaged one; `arena db backup` says to use pg_dump (exit 2), without the password."""
    p = play(tmp_path / "home", url=db_url, games=1)
    victim = p.matches[0]
    engine = create_engine(db_url)
    with engine.begin() as conn:
        data = bytes(
            conn.execute(text("SELECT data FROM replay WHERE match_id = :m"), {"m": victim}).scalar_one()
        )
        bad = data[:20] + bytes(b ^ 0x5A for b in data[20:28]) + data[28:]
        conn.execute(text("UPDATE replay SET data = :d WHERE match_id = :m"), {"d": bad, "m": victim})
    engine.dispose()
    proc = run_cli(p.home, db_url, "db", "check", code=1)
    assert "PostgreSQL checks its own pages" in proc.stdout
    assert [int(m) for m in re.findall(r"^FAIL match (\d+):", proc.stdout, re.M)] == [victim], proc.stdout
    assert f"1 damaged: match {victim}" in proc.stdout
    assert "pg_dump" in proc.stderr or "pg_restore" in proc.stderr
    assert "Traceback" not in proc.stderr

    backup = run_cli(p.home, db_url, "db", "backup", str(tmp_path / "x.dump"), code=2)
    assert "pg_dump --format=custom --file" in backup.stderr and "pg_restore" in backup.stderr
    assert ":arena@" not in backup.stderr and "arena:arena" not in backup.stderr  # no password shown
    assert not (tmp_path / "x.dump").exists()


def test_damage_met_mid_command_is_one_message(copy: Played, tmp_path: Path) -> None:
    """The file is damaged while a command runs (truncated under `arena match` after it opened the
    database, before it records the result): the error escaping the command is still the one
    message, through the command group's handler (arena.cli.common.escaped)."""
    slow = Path(__file__).resolve().parents[2] / "bots" / "faulty" / "slow_bot.py"
    err = tmp_path / "err.txt"
    with err.open("w") as fh:
        proc = subprocess.Popen(
            [str(ARENA), "match", "greedy", str(slow), "--no-sandbox", "--move-time", "2", "--bank", "0"],
            env={**arena_env(copy.home, copy.url), "FAULT_AT": "1", "SLEEP": "30"},
            cwd=copy.home, stdout=subprocess.DEVNULL, stderr=fh,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not re.search(r"^match \d+: greedy vs", err.read_text(), re.M):
                assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
                time.sleep(0.05)
            os.truncate(copy.file, 40000)  # the slow bot holds the match for 2 s: damage it meanwhile
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    stderr = err.read_text()
    assert code == 1, stderr
    assert_clear_damage_message(subprocess.CompletedProcess([], code, "", stderr), copy)


def test_web_pages_over_damage(copy: Played) -> None:
    """`arena web` on a file with a garbled replay page: the damaged matches' pages say the
    database is damaged (503, naming the file), the other pages still work."""
    bad, good = copy.matches[0], copy.matches[1]
    garble_pages(copy.file, [overflow_page_of(copy.file, bad)])
    proc = subprocess.Popen(
        [str(ARENA), "web", "--port", "0"], env=arena_env(copy.home, copy.url), cwd=copy.home,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        found = re.search(r"(http://127\.0\.0\.1:\d+)", proc.stdout.readline())
        assert found, proc.poll()
        base = found.group(1)
        with urllib.request.urlopen(f"{base}/matches/{good}", timeout=30) as response:
            assert response.status == 200
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{base}/matches/{bad}", timeout=30)
        assert info.value.code == 503
        page = info.value.read().decode()
        assert "Database damaged" in page and str(copy.file) in page and "arena db check" in page
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
