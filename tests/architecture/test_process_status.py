"""The sandbox reports a bot process's status in its own terms (a real process, unsandboxed): None
while it runs, STOPPED while frozen, EXITED once it ended; the referee reads that as stalled/crashed."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable

from arena.endings import Reason
from arena.referee.faults import process_forfeit
from arena.sandbox import BotProcess
from arena.sandbox.status import ProcessStatus


def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_a_real_process_reports_running_stopped_and_exited() -> None:
    async def main() -> None:  # the process group: the guard and the bot below it
        proc = BotProcess("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"])
        await proc.start("unix:/nonexistent", "token")
        try:
            assert proc.probe() is None
            assert proc.pid is not None
            os.killpg(proc.pid, signal.SIGSTOP)
            _until(lambda: proc.probe() is not None)
            probed = proc.probe()
            assert probed is not None and probed[0] is ProcessStatus.STOPPED, probed
            assert process_forfeit(probed) == (Reason.STALLED, probed[1])
            os.killpg(proc.pid, signal.SIGCONT)
            _until(lambda: proc.probe() is None)
            os.killpg(proc.pid, signal.SIGKILL)
            assert proc.proc is not None
            await asyncio.wait_for(proc.proc.wait(), 10)
            probed = proc.probe()
            assert probed is not None and probed[0] is ProcessStatus.EXITED, probed
            assert process_forfeit(probed) == (Reason.CRASHED, probed[1])
        finally:
            await proc.stop(grace=0.1)

    asyncio.run(main())
