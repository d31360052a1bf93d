"""The command line: 'dask scheduler' + 'arena worker' + 'arena tournament run --cluster', and
'--local-cluster' on start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import REPO, wait_gone

BIN = Path(sys.executable).parent
ARENA = BIN / "arena"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["ARENA_HOME"] = str(home)
    env.pop("ARENA_DATABASE_URL", None)
    env.pop("COLUMNS", None)
    env.update(extra)
    return env


def cli(home: Path, *args: str, code: int = 0, **env: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(ARENA), *args], env=_env(home, **env), capture_output=True, text=True, timeout=240, cwd=home
    )
    said = f"arena {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == code, said
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[str]:
    """A 'dask scheduler' process on 127.0.0.1; its address."""
    info = tmp_path / "scheduler.json"
    proc = subprocess.Popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(info)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not info.exists() or not info.read_text().strip():
            assert proc.poll() is None and time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        yield str(json.loads(info.read_text())["address"])
    finally:
        _stop(proc)


def _register(home: Path) -> None:
    for name in ("greedy", "invader"):
        cli(home, "bots", "add", name, str(REPO / "bots" / f"{name}_bot.py"))


def test_arena_worker_serves_a_cluster_tournament(arena_home: Path, tmp_path: Path, scheduler: str) -> None:
    whome = tmp_path / "worker-home"
    worker = subprocess.Popen(
        [str(ARENA), "worker", "--scheduler", scheduler, "--nworkers", "1", "--home", str(whome)],
        env=_env(arena_home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _register(arena_home)
        run = cli(arena_home, "tournament", "run", "greedy", "invader", "--tables", "2", "--games", "1",
                  "--seed", "3", "--cluster", scheduler)  # fmt: skip
        assert "matches: 2 finished" in run.stderr
        assert "greedy" in run.stdout and "invader" in run.stdout
        cached = sorted(p.name for p in (whome / "artifacts").glob("*/*"))
        assert cached == ["greedy_bot.py", "invader_bot.py"]  # sent to the worker's own cache
        assert (whome / "logs" / "tournament-1").is_dir()
    finally:
        _stop(worker)
    assert worker.returncode is not None
    assert not wait_gone(str(whome / "artifacts"), 10), "the worker left bots behind"


def test_local_cluster_start_and_bad_options(arena_home: Path) -> None:
    _register(arena_home)
    made = cli(arena_home, "tournament", "create", "greedy", "invader", "--tables", "2", "--games", "1",
               "--no-sandbox")  # fmt: skip
    tid = made.stdout.strip()
    both = cli(arena_home, "tournament", "start", tid, "--jobs", "2", "--local-cluster", "2", code=2)
    assert "use only one of --jobs, --local-cluster" in both.stderr
    pinned = cli(arena_home, "tournament", "start", tid, "--no-pin", "--cluster", "tcp://127.0.0.1:9", code=2)
    assert "--no-pin" in pinned.stderr and "pinning is for workers on this machine" in pinned.stderr
    gone = cli(arena_home, "tournament", "start", tid, "--cluster", "tcp://127.0.0.1:9", code=1,
               DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s")  # fmt: skip
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in gone.stderr
    run = cli(arena_home, "tournament", "start", tid, "--local-cluster", "1")
    assert "matches: 2 finished" in run.stderr


def _worker_setup(dask_worker: Any) -> tuple[list[str], list[int]]:
    return sorted(dask_worker.periodic_callbacks), sorted(os.sched_getaffinity(0))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_local_cluster_pins_its_workers_and_stops_their_profiler() -> None:
    from arena.tournament.cluster import PROFILER_CALLBACKS, local_cluster

    allowed = sorted(os.sched_getaffinity(0))
    with local_cluster(2) as client:
        seen = client.run(_worker_setup)
    assert len(seen) == 2
    for callbacks, _ in seen.values():
        assert "heartbeat" in callbacks and not set(PROFILER_CALLBACKS) & set(callbacks), callbacks
    assert sorted(tuple(cores) for _, cores in seen.values()) == [(allowed[0],), (allowed[1],)]
    with local_cluster(2, pin=False) as client:
        assert all(cores == allowed for _, cores in client.run(_worker_setup).values())


def _name_pid_cores(dask_worker: Any) -> tuple[str, int, list[int], list[str]]:
    cores = sorted(os.sched_getaffinity(0))
    return str(dask_worker.name), os.getpid(), cores, sorted(dask_worker.periodic_callbacks)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_worker_the_nanny_restarts_is_pinned_and_quiet_again() -> None:
    from arena.tournament.cluster import PROFILER_CALLBACKS, local_cluster

    allowed = sorted(os.sched_getaffinity(0))
    with local_cluster(2) as client:
        before = {name: (pid, cores) for name, pid, cores, _ in client.run(_name_pid_cores).values()}
        victim = sorted(before)[1]
        os.kill(before[victim][0], signal.SIGKILL)  # a worker process dies; its nanny restarts it
        deadline = time.monotonic() + 60
        while True:
            seen = client.run(_name_pid_cores, on_error="ignore").values()  # the dead one fails
            after = {name: (pid, cores, cbs) for name, pid, cores, cbs in seen}
            if victim in after and after[victim][0] != before[victim][0]:
                break
            assert time.monotonic() < deadline, f"worker {victim} not restarted: {after}"
            time.sleep(0.2)
        assert sorted(after) == sorted(before)
        for name, (_, cores, callbacks) in after.items():
            assert cores == before[name][1] and len(cores) == 1 and cores[0] in allowed, (name, after)
            assert "heartbeat" in callbacks and not set(PROFILER_CALLBACKS) & set(callbacks), callbacks


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--host", "192.0.2.1"], "cannot listen on 192.0.2.1"),  # TEST-NET-1: not this machine's
        (["--host", "nosuchhost.invalid"], "cannot listen on nosuchhost.invalid"),
        (["--nworkers", "99999999999"], "less than or equal to 1024"),
        (["--dashboard-address", "garbage"], "'garbage' is not [HOST]:PORT"),  # was a Dask traceback
        (["--dashboard-address", "127.0.0.1:99999"], "is not [HOST]:PORT"),
        (["--dashboard-address", "192.0.2.1:8787"], "cannot listen on 192.0.2.1"),
    ],
)
def test_arena_worker_refuses_what_it_cannot_start(arena_home: Path, args: list[str], said: str) -> None:
    """An address this machine does not have made every nanny fail in a Dask traceback ('Nanny
    failed to start'), and a huge --nworkers had Dask start nannies until stopped: now one line,
    exit 2, before Dask starts."""
    start = time.monotonic()
    refused = cli(arena_home, "worker", "--scheduler", "tcp://127.0.0.1:9", *args, code=2, COLUMNS="300")
    assert said in refused.stderr, refused.stderr
    assert time.monotonic() - start < 30
