"""A background service that does not stop in time never keeps ``arena serve`` from ending.

A CI run once saw the ladder take 60 s to stop after SIGTERM, and the process then hang at its
interpreter's exit (which waits for worker pools' threads) until it was killed.  Now a slow stop
is logged with where every thread is, and a service still running after its stop ends the
process at once with the status it would have had.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from arena import lifecycle
from arena.serve import runner
from arena.serve.services import ServeContext


class _Stubborn:
    """A service whose stop() waits on an event the test sets (a stop that hangs for a while)."""

    name = "stubborn"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.thread = threading.Thread(target=self.release.wait, name="arena-stubborn", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.thread.join(timeout=3.0)

    def alive(self) -> bool:
        return self.thread.is_alive()


def test_a_slow_stop_is_logged_with_where_the_threads_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "SLOW_STOP", 0.3)
    lines: list[str] = []
    service = _Stubborn()
    service.start()
    ctx = ServeContext(db=None, log=lines.append)  # type: ignore[arg-type]
    try:
        asyncio.run(runner._stop_service(service, ctx))
    finally:
        service.release.set()
    assert lines[0].startswith("stubborn: still stopping after 0 s; the threads are at:"), lines
    stubborn = lines[0].split("thread 'arena-stubborn' (daemon):", 1)
    assert len(stubborn) == 2, lines[0]
    assert "in wait" in stubborn[1].split("\nthread ", 1)[0], lines[0]  # blocked where it is
    assert lines[-1] == "stubborn: took 3 s to stop", lines


def test_thread_stacks_names_every_thread_and_its_calls() -> None:
    gate = threading.Event()
    t = threading.Thread(target=gate.wait, name="arena-probe-thread")
    t.start()
    try:
        text = lifecycle.thread_stacks()
    finally:
        gate.set()
        t.join()
    assert "thread 'MainThread':" in text
    assert "thread 'arena-probe-thread':" in text
    assert "in wait" in text  # the call it is blocked in


@pytest.mark.parametrize(("stuck", "status"), [(["ladder"], 143), ([], 143)])
def test_the_server_ends_at_once_when_a_service_is_stuck(
    stuck: list[str], status: int, tmp_path: Path
) -> None:
    """With a service stuck, ``_end`` leaves at once although a non-daemon thread (as a worker
    pool's manager thread is, for the interpreter's exit) would block the normal exit for ever;
    without one, it is the ordinary ``typer.Exit`` (the thread released after 2 s, then exit)."""
    script = textwrap.dedent(
        f"""
        import threading, time, typer
        from arena.cli.serve_cmd import _end
        gate = threading.Event()
        threading.Thread(target=gate.wait, args=({"None" if stuck else "2.0"},), daemon=False).start()
        try:
            _end({status}, {stuck!r})
        except typer.Exit as exc:
            print("typer.Exit", exc.exit_code, flush=True)
            raise SystemExit(exc.exit_code)
        """
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    took = time.monotonic() - started
    assert done.returncode == status, done.stderr
    if stuck:
        assert "typer.Exit" not in done.stdout
        assert took < 30
    else:
        assert "typer.Exit 143" in done.stdout
