"""A worker killed while it sends its result leaves its pool's manager thread blocked for ever on
the rest of the message (the other workers hold the pipe open): the pool never notices the death,
its futures never complete, and a coordinator waiting for them waits for ever (a CI run's ladder
test hung 300 s so).  The executor now notices a worker dead for ``dead_grace`` seconds that its
pool still counts as running, reports the pool broken, and its restart is bounded and leaves no
thread behind."""

from __future__ import annotations

import os
import platform
import signal
import time
from pathlib import Path

import pytest

from arena.tournament.runner import LocalExecutor, Requeue

from . import stuck_helpers

SIZE = 400 * 1024 * 1024  # long enough to write that a kill lands mid-message


class _Executor(LocalExecutor):
    play = staticmethod(stuck_helpers.send)  # type: ignore[assignment]


def _outcome(executor: LocalExecutor, future: object, within: float) -> object:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for handle, outcome in executor.wait([future]):  # type: ignore[list-item]
            assert handle is future
            return outcome
    raise AssertionError(f"no outcome within {within} s: the coordinator would wait for ever")


def _writing_its_result(pid: int) -> bool:
    """Whether the process is blocked in a ``write`` of at least half the result (the payload
    going down the pipe as the pool's manager reads it): ``/proc/PID/syscall`` (x86-64: 1 is
    write; its third argument the byte count)."""
    fields = Path(f"/proc/{pid}/syscall").read_text().split()
    return len(fields) > 3 and fields[0] == "1" and int(fields[3], 16) >= SIZE // 2


@pytest.mark.skipif(platform.machine() != "x86_64", reason="reads x86-64 syscall numbers from /proc")
def test_a_worker_killed_mid_message_is_noticed_and_the_pool_replaced(tmp_path: Path) -> None:
    executor = _Executor(2, tmp_path, None)
    executor.dead_grace = 2.0
    try:
        marker = tmp_path / "sending"
        future = executor.submit(("big", str(marker), SIZE))  # type: ignore[arg-type]
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            time.sleep(0.002)  # (the file exists before its pid is written: read it once it is)
        pid = int(marker.read_text())
        while not _writing_its_result(pid):  # kill it mid-message
            assert time.monotonic() < deadline, "the worker never began to send its result"
            time.sleep(0.001)
        os.kill(pid, signal.SIGKILL)
        outcome = _outcome(executor, future, within=30.0)
        assert isinstance(outcome, Requeue) and outcome.broken, outcome
        assert "did not notice within 2 s" in outcome.reason, outcome.reason
        manager = executor.pool._executor_manager_thread  # type: ignore[attr-defined]
        started = time.monotonic()
        executor.restart()
        assert time.monotonic() - started < 20.0
        assert manager is None or not manager.is_alive(), "the old pool's manager thread is left"
        small = _outcome(executor, executor.submit(("small", "", 0)), within=60.0)  # type: ignore[arg-type]
        assert small == "small"  # the new pool plays
    finally:
        executor.abort()
