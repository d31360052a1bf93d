"""A stop signal that lands while a finalizer runs is neither printed as an ignored exception
nor lost: it is raised at the next safe point."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import gc, os, signal, time
    from arena.lifecycle import StopSignals, Stopped, deferred_stop

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs inside __del__
            for _ in range(1000):
                time.sleep(0.001)

    with StopSignals() as stops:
        Finalized()  # dropped at once: __del__ runs, Stopped is raised there and swallowed
        gc.collect()
        print("pending", stops.signum, flush=True)
        try:
            with deferred_stop():
                pass
        except Stopped as exc:
            print("raised", exc.signum, flush=True)
    """
)


def test_a_stop_inside_a_finalizer_is_kept_and_not_printed() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pending", "15", "raised", "15"], out.stdout
    assert "Exception ignored" not in out.stderr, out.stderr
