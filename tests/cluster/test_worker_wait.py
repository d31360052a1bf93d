"""``arena worker`` started before its scheduler waits for it, says so in one line, and a stop
meanwhile is one line too (it was Dask's silent wait, and a stop printed a hundred lines of
Dask's traceback); something at the address that is not Dask is refused at once."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
WAITING = "arena worker: waiting for the Dask scheduler at"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lines:
    """The stderr lines of a running process, read by a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._q: queue.Queue[str] = queue.Queue()
        assert proc.stderr is not None
        stream = proc.stderr
        threading.Thread(target=lambda: [self._q.put(line) for line in stream], daemon=True).start()

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} within {timeout} s: {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return line

    def rest(self) -> list[str]:
        time.sleep(0.2)
        while not self._q.empty():
            self.seen.append(self._q.get())
        return self.seen


@contextmanager
def worker(home: Path, address: str) -> Iterator[tuple[subprocess.Popen[str], Lines]]:
    env = dict(os.environ, ARENA_HOME=str(home))
    proc = subprocess.Popen(
        [str(BIN / "arena"), "worker", "--scheduler", address, "--nworkers", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=home,
    )  # fmt: skip
    try:
        yield proc, Lines(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_worker_waiting_for_its_scheduler_stops_in_one_line(arena_home: Path, sig: int) -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"
    with worker(arena_home, address) as (proc, lines):
        said = lines.wait_for(WAITING)
        assert address in said and "Connection refused" in said, said
        proc.send_signal(sig)
        assert proc.wait(30) == 128 + sig
        seen = lines.rest()
    how = "interrupted (Ctrl-C)" if sig == signal.SIGINT else "stopped by SIGTERM"
    assert [line.rstrip("\n") for line in seen] == [said.rstrip("\n"), f"arena worker: {how}"], seen


def test_a_worker_started_first_serves_once_the_scheduler_comes(arena_home: Path, tmp_path: Path) -> None:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    with worker(arena_home, address) as (proc, lines):
        lines.wait_for(WAITING)
        scheduler = subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            lines.wait_for("the scheduler at " + address + " answers; starting the workers")
            lines.wait_for("Starting established connection")  # Dask's worker registered with it
            assert proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 128 + signal.SIGTERM
        finally:
            scheduler.terminate()
            scheduler.wait(30)
    assert not any("Traceback" in line for line in lines.rest()), lines.seen


def test_something_that_is_not_a_scheduler_is_refused_at_once(arena_home: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        stop = threading.Event()

        def answer() -> None:  # a service that says something else and hangs up
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        try:
            with worker(arena_home, address) as (proc, lines):
                assert proc.wait(60) == 1
                seen = lines.rest()
        finally:
            stop.set()
            thread.join(5)
    assert len(seen) == 1 and seen[0].startswith(f"arena worker: no Dask scheduler at {address}: "), seen
