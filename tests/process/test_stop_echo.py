"""The same stop signal twice at once (coreutils' ``timeout`` sends it to the command and then to
its process group) is one stop, cleanly; a second one later still ends the process at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    from arena.lifecycle import StopSignals, Stopped, deferred_stop

    gap = float(sys.argv[1])
    with StopSignals() as stops:
        try:
            with deferred_stop():
                os.kill(os.getpid(), signal.SIGTERM)
                if gap:
                    time.sleep(gap)
                os.kill(os.getpid(), signal.SIGTERM)  # as 'timeout' does: the group gets it too
                for _ in range(20):
                    time.sleep(0.005)
        except Stopped as exc:
            print("clean stop", exc.signum, flush=True)
    """
)


def _run(gap: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(gap)], capture_output=True, text=True, timeout=60
    )


def test_the_same_signal_twice_at_once_is_one_clean_stop() -> None:
    for _ in range(5):  # (the echo lands before or after the first handler ran: either way one stop)
        done = _run(0.0)
        assert done.stdout.split() == ["clean", "stop", "15"], (done.stdout, done.stderr)
        assert "again" not in done.stderr, done.stderr


def test_the_same_signal_again_later_still_stops_at_once() -> None:
    done = _run(0.05)
    assert done.returncode == 128 + 15, (done.stdout, done.stderr)
    assert "stopped by SIGTERM again: stopped at once" in done.stderr, done.stderr
    assert "clean stop" not in done.stdout
