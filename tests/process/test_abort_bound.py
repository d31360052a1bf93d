"""An aborted executor returns in bounded time even when its pool's manager thread does not
end (a CI run saw a ladder's stop wait 60 s in ``ProcessPoolExecutor.shutdown(wait=True)``, and
the process then hang at exit): the stuck thread is logged with every thread's stack, and left."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from arena.tournament import runner
from arena.tournament.runner import LocalExecutor


class _PoolWithAStuckManager:
    """What abort() sees of a ProcessPoolExecutor whose manager thread never ends."""

    def __init__(self, gate: threading.Event) -> None:
        self._processes: dict[int, object] = {}
        self._executor_manager_thread = threading.Thread(target=gate.wait, name="arena-stuck-manager")
        self._executor_manager_thread.start()
        self.shut = False

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        assert not wait, "abort() must not wait without a bound"
        self.shut = True


def test_abort_is_bounded_when_the_pools_manager_thread_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(runner, "SHUTDOWN_WAIT", 0.5)
    executor = LocalExecutor(1, tmp_path, None)
    executor.pool.shutdown(wait=True)  # the real one (never started a worker) is let go
    gate = threading.Event()
    stuck = _PoolWithAStuckManager(gate)
    executor.pool = stuck  # type: ignore[assignment]
    try:
        with caplog.at_level(logging.WARNING, logger=runner.__name__):
            started = time.monotonic()
            executor.abort()
            took = time.monotonic() - started
        assert stuck.shut
        assert took < 5.0, took
        (record,) = [r for r in caplog.records if "manager thread did not end" in r.getMessage()]
        assert "thread 'arena-stuck-manager':" in record.getMessage()
    finally:
        gate.set()
        stuck._executor_manager_thread.join(5)


def test_an_aborted_real_pool_is_let_go_with_its_manager_thread(tmp_path: Path) -> None:
    """The real pool, its worker started: abort() ends the worker and the pool's manager thread."""
    executor = LocalExecutor(1, tmp_path, None)
    future = executor.pool.submit(time.sleep, 30)
    executor._note_processes()
    deadline = time.monotonic() + 60
    while not any(w.alive() for w in executor.workers):
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.05)
    manager = executor.pool._executor_manager_thread  # type: ignore[attr-defined]
    assert isinstance(manager, threading.Thread)
    started = time.monotonic()
    executor.abort()
    assert time.monotonic() - started < runner.ABORT_GRACE + runner.SHUTDOWN_WAIT
    assert not manager.is_alive()
    assert not any(w.alive() for w in executor.workers)
    assert future.done()
