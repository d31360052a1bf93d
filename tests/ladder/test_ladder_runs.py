"""Runs of the ladder one after another (real ``arena ladder run`` processes, real bots, a real
SQLite file): ``--max-tables`` and ``--stop-after`` limit one run and never end the ladder, and
both let the run's worker processes go cleanly (no SIGTERM); a ladder that an earlier version
ended for good with a stored ``max_tables`` plays again (from the command line and under ``arena
serve``'s background service); the settings only a new ladder takes say so in ``--help``, and a
later run that asks for other ones is told that the stored ones are kept and how to change
them."""

from __future__ import annotations

import json
import time
from collections.abc import Hashable
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest
from store.helpers import cli_inproc, run_cli, sample

from arena.ladder.background import LadderService
from arena.ladder.field import MAX_TABLE_CYCLE, ensure_ladder, find_ladder
from arena.ladder.pull import tables_of
from arena.ladder.ratings import fit_state
from arena.ladder.service import LadderSettings, Refitter, play_ladder, run_ladder
from arena.referee.timecontrol import TimeControl
from arena.serve.services import ServeContext
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.tournaments import MatchTask, get_tournament, status_counts
from arena.tournament.runfile import RunFile
from arena.tournament.runner import LocalExecutor


def _bots(url: str) -> None:
    db = Database(url)
    for name in ("greedy", "random"):
        add_bot(db, name, sample(name))
    db.close()


def _ladder_state(url: str) -> tuple[str, dict[str, object], dict[str, int]]:
    """The ladder's status, stored format options and matches by status."""
    db = Database(url)
    try:
        t = get_tournament(db, 1)
        options = json.loads(t.config)["format_options"]
        return t.status, options, dict(status_counts(db, 1))
    finally:
        db.close()


def _as_an_earlier_version_left_it(url: str, max_tables: int) -> None:
    """What the code before the fix stored: the first run's ``max_tables`` among the ladder's
    format options, and the ladder marked finished once that many tables were played."""
    db = Database(url)
    try:
        t = get_tournament(db, 1)
        config = json.loads(t.config)
        config["format_options"] = {"inflight": 2, "max_tables": max_tables}
        with db.session() as session:
            t.config = json.dumps(config)
            t.status = "finished"
            session.add(t)
    finally:
        db.close()


def test_max_tables_limits_one_run_and_the_next_run_goes_on(sqlite_url: str, arena_home: Path) -> None:
    """The newcomer's report: after 'arena ladder run --max-tables 1' every later run played
    nothing, said 'stopped as asked' and left the ladder 'finished'."""
    _bots(sqlite_url)
    first = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--tables", "2",
                    "--no-sandbox", "--max-tables", "1")  # fmt: skip
    status, options, counts = _ladder_state(sqlite_url)
    assert status == "running" and counts == {"finished": 2}  # was: finished, for good
    assert "max_tables" not in options  # a run's limit is never stored
    assert "played 2 matches" in first.stderr and "--max-tables" in first.stderr, first.stderr

    second = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--no-sandbox",
                     "--stop-after", "2")  # fmt: skip
    assert "played 2 matches" in second.stderr and "--stop-after" in second.stderr, second.stderr
    assert second.stderr.count("ladder match ") == 2
    assert "warning" not in second.stderr  # nothing asked differs from the stored ladder
    status, _, counts = _ladder_state(sqlite_url)
    assert status == "running" and counts.get("finished") == 4
    left = counts.get("queued", 0)  # a table handed out ahead (jobs + 1 in flight), not yet played

    third = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--no-sandbox",
                    "--max-tables", "2")  # fmt: skip
    assert f"played {left + 4} matches" in third.stderr, third.stderr  # what was left, then 2 tables
    status, options, counts = _ladder_state(sqlite_url)
    assert status == "running" and counts == {"finished": 8 + left} and "max_tables" not in options
    listed = run_cli(arena_home, sqlite_url, "tournament", "list").stdout
    assert "finished" in listed and "running" in listed  # the column and the ladder's status


class _WatchedPool(LocalExecutor):
    """A local pool that keeps its worker processes (to read their exit codes once the run is
    over) and counts its aborts (each worker sent SIGTERM)."""

    def __init__(self, log_dir: Path, run: RunFile) -> None:
        super().__init__(2, log_dir, None, run)
        self.processes: dict[int, BaseProcess] = {}
        self.aborts = 0

    def submit(self, task: MatchTask) -> Hashable:
        handle = super().submit(task)
        self.processes.update(getattr(self.pool, "_processes", None) or {})
        return handle

    def abort(self) -> None:
        self.aborts += 1
        super().abort()


def test_max_tables_lets_the_workers_go_as_a_normal_end_does(sqlite_url: str, arena_home: Path) -> None:
    """A run stopped by --max-tables used to abort its pool: every worker was sent SIGTERM and
    exited 143 (128 + SIGTERM).  Now it ends as a --stop-after run does: the pool is shut down,
    each worker exits 0, and every match of the run's tables is recorded first."""
    _bots(sqlite_url)
    db = Database(sqlite_url)
    pools: list[_WatchedPool] = []

    def executor(_tid: int, run: RunFile) -> _WatchedPool:
        pools.append(_WatchedPool(arena_home / "logs", run))
        return pools[-1]

    settings = LadderSettings(seed=2, table_sizes=(2,), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=3)  # fmt: skip
    try:
        done = play_ladder(db, settings, jobs=2, executor=executor, refit_every=60)
        assert (done.ended, done.played) == ("max_tables", 6)  # 3 tables of 2 seat rotations
        assert tables_of(db, 1) == 3 and status_counts(db, 1) == {"finished": 6}
        assert get_tournament(db, 1).status == "running"
        again = play_ladder(db, LadderSettings(), jobs=2, executor=executor, refit_every=60, stop_after=2)
        assert (again.ended, again.played) == ("stop_after", 2)
        refit_process_exit = _refit_once_and_stop(db)
    finally:
        db.close()
    for pool, how in zip(pools, ("--max-tables", "--stop-after"), strict=True):
        exits = {pid: p.exitcode for pid, p in pool.processes.items()}
        assert pool.aborts == 0 and exits and set(exits.values()) == {0}, (how, exits)
    assert refit_process_exit == 0  # an idle refit process is let go too (it was sent SIGTERM: -15)


def _refit_once_and_stop(db: Database) -> int | None:
    """Refit the ladder's stale table once in the refitter's own process, stop the refitter, and
    say how that process ended."""
    refitter = Refitter(db, 1, every=0.05).start()
    try:
        deadline = time.monotonic() + 120
        while refitter.fits < 1:
            assert time.monotonic() < deadline, "no refit within 120 s"
            time.sleep(0.05)
        assert fit_state(db, 1).fresh
        assert refitter._pool is not None
        (process,) = (getattr(refitter._pool, "_processes", None) or {}).values()
    finally:
        refitter.stop()
    process.join(10)
    return process.exitcode


def test_a_ladder_an_earlier_version_ended_plays_again(sqlite_url: str, arena_home: Path) -> None:
    """A database from before the fix: the stored max_tables is dropped (not just outvoted) and
    the ladder is no longer finished; the next run plays instead of claiming it stopped."""
    _bots(sqlite_url)
    db = Database(sqlite_url)
    settings = LadderSettings(seed=2, table_sizes=(2,), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=1)  # fmt: skip
    run_ladder(db, settings, jobs=1)
    db.close()
    _as_an_earlier_version_left_it(sqlite_url, 1)

    again = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--no-sandbox",
                    "--stop-after", "2")  # fmt: skip
    assert again.stderr.count("ladder match ") == 2, again.stderr
    assert "played 2 matches" in again.stderr
    status, options, counts = _ladder_state(sqlite_url)
    assert status == "running" and counts.get("finished") == 4
    assert options.get("max_tables") is None and options.get("inflight") is None


def test_serve_s_ladder_service_resumes_a_ladder_an_earlier_version_ended(
    sqlite_url: str, arena_home: Path
) -> None:
    """'arena serve' runs the ladder through the same code: it used to log 'nothing more to
    play' and stop at once on such a database; now it plays on until stopped."""
    _bots(sqlite_url)
    db = Database(sqlite_url)
    settings = LadderSettings(seed=2, table_sizes=(2,), control=TimeControl(2.0, 20.0), sandbox=None,
                              max_tables=1)  # fmt: skip
    run_ladder(db, settings, jobs=1)
    _as_an_earlier_version_left_it(sqlite_url, 1)
    said: list[str] = []
    service = LadderService(ServeContext(db=db, jobs=1, sandbox=None, log=said.append))
    service.start()
    try:
        deadline = time.monotonic() + 90
        while status_counts(db, 1).get("finished", 0) < 4:
            assert service.alive(), f"the ladder service ended: {said}"
            assert time.monotonic() < deadline, f"no ladder match within 90 s: {said}"
            time.sleep(0.1)
    finally:
        service.stop()
    assert not service.alive(), said  # the log says where its threads wait
    assert not any("handed out its" in line for line in said), said
    assert get_tournament(db, 1).status == "running"
    db.close()


def test_new_ladder_only_settings_say_so_and_a_later_run_is_told(sqlite_url: str, arena_home: Path) -> None:
    """--help marks the settings only a new ladder takes; a later run that asks for others is
    warned (the stored ones are kept, and played with) and told about --new, which starts a new
    ladder with them."""
    helped = run_cli(arena_home, sqlite_url, "ladder", "run", "--help").stdout
    flat = " ".join(helped.replace("│", " ").split())
    for option in ("--seed", "--tables", "--move-time", "--bank", "--no-sandbox"):
        part = flat[flat.index(option) :]
        assert "a new ladder only" in part[:220], (option, part[:220])
    assert "this run" in flat[flat.index("--max-tables") :][:200]

    _bots(sqlite_url)
    run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--tables", "2", "--seed", "3",
            "--no-sandbox", "--max-tables", "1")  # fmt: skip
    later = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--tables", "3,4", "--seed", "4",
                    "--move-time", "2", "--stop-after", "2")  # fmt: skip
    warnings = [line for line in later.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 6, later.stderr
    for said in (
        "a seed small enough for a bot to find by trying",  # 3: see the next test
        "--tables setting: 2 (this run asked for 3,4)",
        "--seed setting: 3 (this run asked for 4)",
        "--move-time setting: 1 (this run asked for 2)",
        "sandbox setting: unsandboxed (this run asked for sandboxed)",
        "arena ladder run --new",
    ):
        assert any(said in w for w in warnings), (said, warnings)
    assert "played 2 matches" in later.stderr
    db = Database(sqlite_url)
    t = get_tournament(db, 1)
    assert (t.table_sizes, t.seed, t.move_time) == ("2", 3, 1.0)  # kept
    assert json.loads(t.config)["sandbox"] is None
    db.close()

    fresh = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--new", "--tables", "3",
                    "--seed", "4", "--no-sandbox", "--max-tables", "1")  # fmt: skip
    assert "warning" not in fresh.stderr and "tournament 2" in fresh.stderr, fresh.stderr
    db = Database(sqlite_url)
    ladder = find_ladder(db)
    assert ladder is not None and (ladder.id, ladder.table_sizes, ladder.seed) == (2, "3", 4)
    assert get_tournament(db, 1).status == "finished"  # the old one: kept, no longer played
    assert status_counts(db, 1).get("finished") == 4
    db.close()


def test_a_new_ladder_gets_a_secret_seed_and_a_guessable_one_is_warned_of(
    sqlite_url: str, arena_home: Path
) -> None:
    """Every match seed of the ladder follows from its seed, and a bot can check a guess against
    the dice it sees: a ladder of seed 1 (the old default) had every throw known to a bot that
    tried (an outside review's bot predicted 3309 of 3309 throws under 'arena serve').  A new
    ladder now gets a random 63-bit seed; one with a small seed is warned of, by 'arena ladder
    run' and by 'arena serve''s ladder."""
    from arena.ladder.field import ensure_ladder, guessable_seed

    db = Database(sqlite_url)
    seeds = {ensure_ladder(db, new=True).seed for _ in range(3)}
    assert len(seeds) == 3 and not any(guessable_seed(s) for s in seeds), seeds
    ensure_ladder(db, seed=1, new=True)
    db.close()
    _bots(sqlite_url)
    run = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--no-sandbox", "--stop-after", "1")
    assert "a seed small enough for a bot to find by trying" in run.stderr, run.stderr
    assert "'arena ladder run --new' starts a new ladder with a random secret seed" in run.stderr
    said: list[str] = []
    db = Database(sqlite_url)
    service = LadderService(ServeContext(db=db, jobs=1, sandbox=None, log=said.append))
    service._warn_sandbox()
    db.close()
    assert any("a seed small enough for a bot to find by trying" in line for line in said), said
    fresh = run_cli(arena_home, sqlite_url, "ladder", "run", "--jobs", "1", "--no-sandbox", "--new",
                    "--stop-after", "1")  # fmt: skip
    assert "small enough" not in fresh.stderr, fresh.stderr


def test_a_ladder_with_one_bot_says_it_waits(sqlite_url: str, arena_home: Path) -> None:
    """A ladder with fewer than 2 active bots waits for more; it used to wait in silence (a
    reviewer took it for hung).  It says so once, and Ctrl-C stops it."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    db = Database(sqlite_url)
    add_bot(db, "greedy", sample("greedy"))
    db.close()
    env = {**os.environ, "ARENA_HOME": str(arena_home), "ARENA_DATABASE_URL": sqlite_url}
    arena = str(Path(sys.executable).parent / "arena")
    proc = subprocess.Popen([arena, "ladder", "run", "--jobs", "1", "--no-sandbox"], env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    watchdog = threading.Timer(60, proc.send_signal, (signal.SIGINT,))  # silent for 60 s: stop it
    watchdog.start()
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # blocks until the run says something
        assert first.startswith("ladder: waiting for a table: fewer than 2 active bots"), first
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(60) != 0 and "waiting" not in rest, rest  # said once
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_numbers_for_a_ladder_are_one_line_and_make_no_ladder(sqlite_url: str, arena_home: Path) -> None:
    """``--move-time inf`` (or ``--bank inf``) passed the lower bounds and made a ladder whose
    every seat crashed (``cannot convert float infinity to integer``) and was rated as a tie;
    ``--jobs 100000000000`` ended in an OverflowError traceback."""
    _bots(sqlite_url)
    for args in (("--move-time", "inf"), ("--bank", "inf"), ("--jobs", "100000000000")):
        run = run_cli(
            arena_home, sqlite_url, "ladder", "run", "--no-sandbox", "--max-tables", "1", *args, code=2
        )
        assert args[0] in run.stderr, run.stderr
    assert find_ladder(Database(sqlite_url)) is None


def test_a_table_cycle_longer_than_the_column_is_refused_and_keeps_the_ladder(
    db: Database, db_url: str, arena_home: Path
) -> None:
    """``ladder run --new --tables`` with 9 sizes (17 characters for the 16-character
    ``table_sizes`` column) retired the current ladder and then, on PostgreSQL, ended in a
    DataError traceback: no ladder was left.  It is refused before anything is written, on both
    backends; a cycle of 8 sizes is stored and read back."""
    current = ensure_ladder(db)
    run = cli_inproc(
        arena_home, db_url, "ladder", "run", "--new", "--tables", "2,2,2,2,2,2,2,2,2", "--max-tables", "0",
        "--no-sandbox", code=2,
    )  # fmt: skip
    assert f"at most {MAX_TABLE_CYCLE} player counts" in run.stderr, run.stderr
    with pytest.raises(ValueError, match="at most 8 sizes"):
        ensure_ladder(db, table_sizes=(2,) * 9, new=True)
    kept = find_ladder(db)
    assert kept is not None and kept.id == current.id and kept.status != "finished"
    longest = ensure_ladder(db, table_sizes=(2, 3, 4, 2, 3, 4, 2, 3), new=True)
    assert get_tournament(db, longest.id or 0).table_sizes == "2,3,4,2,3,4,2,3"
