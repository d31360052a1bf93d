"""SIGTERM (and Ctrl-C's SIGINT) stop every long-running command cleanly: ``arena tournament``
stops its bots, keeps what finished, puts the rest back in the queue and prints the resume
command; ``arena serve``, ``arena web`` and ``arena worker`` stop; each says so in one line and
exits 128 + the signal (143 for SIGTERM, 130 for SIGINT)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from store.helpers import REPO, match_rows, run_cli, sample, status_counts_plain

from arena.store.db import Database

from .helpers import (
    TOTAL,
    Started,
    create,
    descendants,
    kill_all,
    marked,
    run_markers,
    start,
    survivors,
    wait_for_finished,
    wait_until,
)


def _stop(run: Started, sig: signal.Signals, *, group: bool, timeout: float = 60) -> int:
    if group:
        os.killpg(run.proc.pid, sig)
    else:
        os.kill(run.proc.pid, sig)
    return run.wait(timeout=timeout)


def _cleanup(run: Started, pids: list[int]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(run.proc.pid, signal.SIGKILL)
    if run.proc.poll() is None:
        run.proc.kill()
        run.proc.wait()
    kill_all(pids)


def _last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


# ---------------------------------------------------------------------- tournaments


@pytest.mark.parametrize(
    ("sig", "executor"),
    [
        (signal.SIGTERM, ("--jobs", "2")),
        (signal.SIGINT, ("--jobs", "2")),
        (signal.SIGINT, ("--local-cluster", "2")),
        (signal.SIGHUP, ("--local-cluster", "2")),
    ],
    ids=["SIGTERM", "SIGINT", "SIGINT-local-cluster", "SIGHUP-local-cluster"],
)
def test_a_signal_to_the_tournaments_group_stops_it_cleanly(
    sqlite_url: str, arena_home: Path, tmp_path: Path, sig: signal.Signals, executor: tuple[str, str]
) -> None:
    """The whole process group gets the signal (a terminal's Ctrl-C or hang-up, ``kill -TERM
    -PGID``): the workers stop their bots themselves (a local Dask cluster's workers leave it to
    their nannies: they printed KeyboardInterrupt tracebacks, or died and were restarted in the
    middle of the stop), the coordinator records what finished and queues the rest.  (``kill
    PID`` of the coordinator alone, on both databases: test_coordinator_death.py.)"""
    db_url = sqlite_url
    tid = create(db_url, arena_home, sandbox=True)
    run = start(arena_home, db_url, tmp_path / "start.log", "tournament", "start", str(tid), *executor)
    tree = []
    try:
        wait_for_finished(run, db_url, tid)
        wait_until(lambda: bool(marked([str(arena_home / "artifacts")])), 30, "bots running")
        tree = descendants(run.proc.pid)
        markers = run_markers(arena_home)
        stopped = time.monotonic()
        code = _stop(run, sig, group=True)
        # Gone 5 s after the signal, or 2 s after the command's own exit if that came later: the
        # resource tracker ends on its own once the last holder of its pipe (the command) has
        # gone, and a loaded clean-clone run found it still there at once after a 5 s stop.
        left = survivors(tree, markers, timeout=max(2.0, stopped + 5.0 - time.monotonic()))
    finally:
        _cleanup(run, [r.pid for r in tree])
    output = run.output()
    assert not left, f"processes of the run outlived it: {left}\n{output}"
    assert code == 128 + sig, output
    how = "interrupted (Ctrl-C)" if sig == signal.SIGINT else f"stopped by {sig.name}"
    last = _last_line(output)
    assert last.startswith(f"error: {how}: ") and f"resume with 'arena tournament resume {tid}'" in last, (
        output
    )
    assert "Traceback" not in output and "leaked" not in output, output
    assert "Restarting worker" not in output and "still alive" not in output, output
    counts = status_counts_plain(db_url, tid)
    assert set(counts) == {"finished", "queued"}, counts  # nothing left running, nothing failed
    assert f"{counts['finished']} of {TOTAL} matches finished, {counts['queued']} queued" in last, last
    db = Database(db_url)
    rows = match_rows(db, tid)
    db.close()
    assert all((r["replays"] == 1) == (r["status"] == "finished") for r in rows)
    resumed = run_cli(arena_home, db_url, "tournament", "resume", str(tid), "--jobs", "2")
    assert f"matches: {TOTAL} finished" in resumed.stderr


def _signal_while_starting(
    run: Started,
    started: Callable[[], bool],
    what: str,
    sig: signal.Signals = signal.SIGINT,
    delay: float = 0.3,
) -> str:
    """Once ``started`` (a child process is there), wait ``delay`` (0.3 s: the child is past its
    interpreter's start, importing Dask, which takes about a second) and send ``sig`` to the
    whole group, as a terminal's Ctrl-C or hang-up does; the run must end with 128 + the
    signal, leave no process and print no traceback.  Its output."""
    tree = []
    try:
        wait_until(started, 90, what)
        time.sleep(delay)
        tree = descendants(run.proc.pid)
        code = _stop(run, sig, group=True, timeout=60)
        left = survivors(tree, [], timeout=15.0)
    finally:
        _cleanup(run, [r.pid for r in tree])
    output = run.output()
    assert not left, f"processes of the run outlived it: {left}"
    assert code == 128 + sig, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    return output


def _spawned_workers(root: int) -> list[int]:
    """The multiprocessing children under ``root`` (a local Dask cluster's worker processes)."""
    found = []
    for ref in descendants(root):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{ref.pid}/cmdline").read_bytes():
                found.append(ref.pid)
    return found


@pytest.mark.parametrize(
    ("sig", "delay"),
    [(signal.SIGINT, 0.3), (signal.SIGTERM, 0.3), (signal.SIGTERM, 1.0), (signal.SIGHUP, 1.0)],
    ids=["SIGINT-importing", "SIGTERM-importing", "SIGTERM-joining", "SIGHUP-joining"],
)
def test_a_signal_while_the_local_clusters_workers_start_is_one_line(
    sqlite_url: str, arena_home: Path, tmp_path: Path, sig: signal.Signals, delay: float
) -> None:
    """A signal to the whole group while ``--local-cluster``'s worker processes import Dask or
    join: they start with SIGINT, SIGTERM and SIGHUP blocked, so it is held until their setup has
    made it harmless.  A Ctrl-C printed a KeyboardInterrupt traceback per worker from its imports
    (after the run's own line), or left one unanswering until its nanny killed it ("Worker
    process still alive after 4.0 seconds"); a SIGTERM or SIGHUP killed them, and their nannies
    restarted them in the middle of the stop ("Restarting worker", broadcast errors; found by an
    outside review)."""
    tid = create(sqlite_url, arena_home, sandbox=True)
    log = tmp_path / "start.log"
    run = start(arena_home, sqlite_url, log, "tournament", "start", str(tid), "--local-cluster", "2")
    output = _signal_while_starting(
        run, lambda: len(_spawned_workers(run.proc.pid)) == 2, "the cluster's worker processes", sig, delay
    )
    assert "still alive" not in output and "Restarting worker" not in output, output
    assert "broadcast to" not in output and "never retrieved" not in output, output
    how = "interrupted (Ctrl-C)" if sig == signal.SIGINT else f"stopped by {sig.name}"
    assert _last_line(output).startswith(f"error: {how}: "), output


# ---------------------------------------------------------------------- arena web


def test_web_stops_cleanly_on_sigterm(sqlite_db: Database, arena_home: Path, tmp_path: Path) -> None:
    run = start(arena_home, sqlite_db.url, tmp_path / "web.log", "web", "--port", "0")
    try:
        wait_until(lambda: "http://" in run.output() or run.proc.poll() is not None, 60, "the web server")
        assert run.proc.poll() is None, run.output()
        url = re.search(r"http://\S+", run.output())
        assert url is not None
        import urllib.request

        with urllib.request.urlopen(url.group(0), timeout=30) as page:
            assert page.status == 200
        code = _stop(run, signal.SIGTERM, group=False, timeout=30)
    finally:
        _cleanup(run, [])
    output = run.output()
    assert code == 143, output
    assert _last_line(output) == "arena web: stopped by SIGTERM", output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 2, output


# ---------------------------------------------------------------------- arena serve


def test_serve_stops_cleanly_on_sigterm_mid_match(sqlite_url: str, arena_home: Path, tmp_path: Path) -> None:
    """A remote bot is in the middle of a match (it sleeps on its first decision) when the
    lobby gets SIGTERM: the match's local bot is stopped, the match is recorded as failed
    (interrupted), nothing stays ``running``, one line, exit 143."""
    db_url = sqlite_url
    run_cli(arena_home, db_url, "bots", "add", "greedy", str(sample("greedy")))
    added = run_cli(arena_home, db_url, "bots", "add", "far", "--remote")
    token = re.search(r"\brt_\S+", added.stdout + added.stderr)
    assert token is not None, added.stdout + added.stderr
    run = start(
        arena_home, db_url, tmp_path / "serve.log", "serve", "--listen", "127.0.0.1:0", "--port", "0",
        "--no-sandbox", "--games", "1", "--move-time", "60", "--bank", "0",
    )  # fmt: skip
    bot = None
    try:
        wait_until(lambda: "listening on" in run.output(), 60, "the lobby")
        address = re.search(r"listening on (\S+)", run.output())
        assert address is not None
        bot = subprocess.Popen(
            [sys.executable, str(REPO / "bots" / "faulty" / "slow_bot.py"), f"--address={address.group(1)}",
             f"--token={token.group(0)}"],
            env={**os.environ, "FAULT_AT": "1", "SLEEP": "120"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(lambda: re.search(r"^match \d+: ", run.output(), re.M) is not None, 60, "a match")
        wait_until(lambda: bool(marked([str(arena_home / "artifacts")])), 30, "the local bot")
        time.sleep(0.5)
        code = _stop(run, signal.SIGTERM, group=False, timeout=30)
        left = survivors([], [str(arena_home / "artifacts")], timeout=5.0)
    finally:
        _cleanup(run, [])
        if bot is not None:
            bot.kill()
            bot.wait()
    output = run.output()
    assert not left, left
    assert code == 143, output
    assert _last_line(output) == (
        "arena serve: stopped by SIGTERM: 0 matches played, 1 in progress recorded as failed (interrupted)"
    ), output
    assert "Traceback" not in output, output
    lobby = re.search(r"lobby \(tournament (\d+)\)", output)  # (a ladder may have tournament 1)
    assert lobby is not None, output
    db = Database(db_url)
    rows = match_rows(db, int(lobby.group(1)))
    db.close()
    assert [r["status"] for r in rows] == ["failed"], rows


# ---------------------------------------------------------------------- arena worker


@pytest.fixture
def scheduler() -> Iterator[str]:
    """A Dask scheduler (with no workers of its own) on a free port."""
    from distributed import LocalCluster

    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=0,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=":0",
    )
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=["SIGTERM", "SIGHUP", "SIGKILL"]
)
def test_worker_stops_with_its_workers(
    scheduler: str, sqlite_url: str, arena_home: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    """``arena worker`` gets SIGTERM (or a closed terminal's SIGHUP): its Dask workers close
    (stopping their bots), it says so in one line and exits 128 + the signal.  Killed outright
    (SIGKILL), its Dask workers die with it.  (SIGHUP used to be passed on as it came, and
    ``dask worker`` does not handle it: it died at once and the resource tracker reported its
    nannies' semaphores leaked.)"""
    from distributed import Client

    run = start(
        arena_home, sqlite_url, tmp_path / "worker.log", "worker", "--scheduler", scheduler, "--nworkers", "1"
    )
    tree = []
    try:
        with Client(scheduler, set_as_default=False) as client:  # type: ignore[no-untyped-call]
            wait_until(lambda: len(client.nthreads()) == 1, 90, "the worker to join")  # type: ignore[no-untyped-call]
        tree = descendants(run.proc.pid)
        assert tree, "no Dask worker process under arena worker"
        stopped = time.monotonic()
        code = _stop(run, sig, group=False, timeout=60)
        left = survivors(tree, [], timeout=max(5.0, stopped + 15.0 - time.monotonic()))
    finally:
        _cleanup(run, [r.pid for r in tree])
    output = run.output()
    assert not left, f"Dask worker processes outlived arena worker: {left}"
    if sig != signal.SIGKILL:
        assert code == 128 + sig, output
        assert _last_line(output) == f"arena worker: stopped by {sig.name}", output
        assert "Traceback" not in output and "leaked" not in output, output
    else:
        assert code == -signal.SIGKILL


def test_ctrl_c_while_the_dask_worker_starts_prints_no_traceback(
    scheduler: str, sqlite_url: str, arena_home: Path, tmp_path: Path
) -> None:
    """A terminal's Ctrl-C (SIGINT to the group) while ``dask worker`` is still importing: one
    line and 130.  ``arena worker`` passed SIGINT on as it came, and the child, not yet running
    its own handlers, printed a KeyboardInterrupt traceback from inside its imports."""
    run = start(
        arena_home, sqlite_url, tmp_path / "worker.log", "worker", "--scheduler", scheduler, "--nworkers", "1"
    )
    output = _signal_while_starting(
        run, lambda: bool(descendants(run.proc.pid)), "arena worker to start dask worker"
    )
    assert _last_line(output) == "arena worker: interrupted (Ctrl-C)", output


def test_serve_ends_with_its_status_when_a_second_hang_up_comes_after_it_stopped(
    sqlite_url: str, arena_home: Path, tmp_path: Path
) -> None:
    """A closed terminal sends SIGHUP twice (the terminal's, then the shell's).  The second one,
    arriving after ``arena serve`` had stopped serving and said so, killed it by the signal (the
    event loop's signal handlers, removed, left the default action): status -1, in 3 runs of 4 in
    an outside review.  Now it ends with 129 either way."""
    run = start(arena_home, sqlite_url, tmp_path / "serve.log", "serve", "--port", "0", "--no-sandbox")
    try:
        wait_until(lambda: "http://" in run.output() or run.proc.poll() is not None, 60, "the server")
        assert run.proc.poll() is None, run.output()
        os.kill(run.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 60
        while "arena serve: stopped" not in run.output() and time.monotonic() < deadline:
            time.sleep(0.001)
        with contextlib.suppress(ProcessLookupError):
            os.kill(run.proc.pid, signal.SIGHUP)  # the shell's, as it goes
        code = run.wait(timeout=60)
    finally:
        _cleanup(run, [])
    output = run.output()
    assert code == 128 + signal.SIGHUP, output
    assert "Traceback" not in output, output
