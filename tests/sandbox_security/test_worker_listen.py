"""Issue 12 item 14: ``arena worker`` listens where it is told, and on loopback by default when the
scheduler is local.

A real ``dask scheduler`` on 127.0.0.1 and a real ``arena worker`` (nanny + worker processes);
their listening TCP sockets are read from the kernel (psutil over ``/proc/net/tcp``).  Before the
fix the worker and nanny listened on every interface (``0.0.0.0`` / ``::``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from arena.tournament.cluster import listen_host, local_cluster, worker_command

BIN = Path(sys.executable).parent


def listening(root: int) -> set[tuple[str, int]]:
    """(address, port) of every listening TCP socket of ``root`` and its descendants."""
    out = set()
    try:
        procs = [psutil.Process(root), *psutil.Process(root).children(recursive=True)]
    except psutil.NoSuchProcess:
        return out
    for proc in procs:
        try:
            conns = proc.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        out |= {(c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN}
    return out


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[str]:
    """A 'dask scheduler' process on 127.0.0.1; its address."""
    info = tmp_path / "scheduler.json"
    proc = subprocess.Popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(info)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not info.exists() or not info.read_text().strip():
            assert proc.poll() is None and time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        yield str(json.loads(info.read_text())["address"])
    finally:
        _stop(proc)


def _worker_sockets(scheduler: str, tmp_path: Path, *extra: str, expect: int) -> set[tuple[str, int]]:
    """Start ``arena worker`` (one worker process), wait until ``expect`` listening sockets are up
    in its process tree, and return them."""
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [str(BIN / "arena"), "worker", "--scheduler", scheduler, "--nworkers", "1",
             "--home", str(tmp_path / "home"), *extra],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            sockets = listening(worker.pid)
            registered = "Registered to" in log.read_text(errors="replace")
            if registered and len(sockets) >= expect:
                time.sleep(0.5)
                return listening(worker.pid)
            assert worker.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, f"the worker did not come up: {sockets}\n{log.read_text()}"
            time.sleep(0.2)
    finally:
        _stop(worker)


def test_arena_worker_listens_on_loopback_with_a_local_scheduler(scheduler: str, tmp_path: Path) -> None:
    """The nanny, the worker and the worker's HTTP server (health and metrics, even without the
    dashboard): all on 127.0.0.1."""
    sockets = _worker_sockets(scheduler, tmp_path, expect=3)
    assert len(sockets) >= 3, sockets
    assert {ip for ip, _ in sockets} == {"127.0.0.1"}, f"listening beyond loopback: {sockets}"


def test_the_dashboard_follows_the_listen_address(scheduler: str, tmp_path: Path) -> None:
    """``--dashboard-address PORT``: the dashboard on that port of the workers' loopback address."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sockets = _worker_sockets(scheduler, tmp_path, "--dashboard-address", str(port), expect=3)
    assert ("127.0.0.1", port) in sockets, sockets
    assert {ip for ip, _ in sockets} == {"127.0.0.1"}, sockets


def test_worker_command_and_listen_host() -> None:
    argv = worker_command("tcp://127.0.0.1:8786", 2)
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and "--no-dashboard" in argv
    assert argv[argv.index("--dashboard-address") + 1] == "127.0.0.1:0"  # the health/metrics server
    argv = worker_command("tcp://127.0.0.1:8786", 2, host="0.0.0.0", dashboard=":8787")
    assert argv[argv.index("--host") + 1] == "0.0.0.0"
    assert argv[argv.index("--dashboard-address") + 1] == "0.0.0.0:8787"
    assert listen_host("localhost:8786") == "127.0.0.1"
    assert listen_host("tcp://[::1]:8786") == "::1"
    remote = listen_host("tcp://192.0.2.1:8786")  # TEST-NET-1: routed, never contacted
    assert remote not in ("0.0.0.0", "::", "127.0.0.1"), remote
    with pytest.raises(ValueError, match="cannot resolve"):
        listen_host("tcp://no-such-host.invalid:8786")


def test_a_local_cluster_listens_on_loopback_only() -> None:
    """``--local-cluster N``: the scheduler and its workers are on 127.0.0.1; the scheduler's
    HTTP server takes a free port, so Dask's default 8787 being taken (here by this test) is no
    warning ("Port 8787 is already in use", which every such run printed while another held it)."""
    with socket.socket() as taken, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.suppress(OSError):  # something else may hold it already: as good
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        with local_cluster(1) as client:
            info = client.scheduler_info()
            addresses = [info["address"], *info["workers"]]
            assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses
            assert {ip for ip, _ in listening(os.getpid())} <= {"127.0.0.1"}
    assert not [str(w.message) for w in caught if "8787" in str(w.message)]
