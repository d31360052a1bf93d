"""A worker's shutdown ends promptly and cleanly: idle, and while its match is starting a bot.

Found with a loop of ``arena serve`` runs stopped by SIGTERM at random moments: about one stop in
fifteen took 5 s (the coordinator's grace before SIGKILL) instead of 0.6 s.  The worker's
shutdown cancelled every task of its loop at once, asyncio's own task that connects a new
process's pipes included; a match cut short inside ``create_subprocess_exec`` then has asyncio
kill the process and wait for it, a wait that only that pipe task ends: it never ended.  And
closing even an idle worker crashed its process (SIGSEGV): gRPC's own tasks were cancelled
before its server was stopped.  Each case runs in a process of its own (a crash must not take
pytest with it).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

IDLE = """
    host = WorkerThread(None, None)
    host.close(timeout=20)
    print("closed", flush=True)
"""

STARTING_A_BOT = """
    host = WorkerThread(None, None)
    launched = []

    async def start_a_bot():  # what a match does first: start its bots' processes
        proc = await asyncio.create_subprocess_exec(
            "sleep", "60", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        launched.append(proc.pid)
        await proc.wait()

    async def scenario():
        match = asyncio.ensure_future(start_a_bot())
        match.set_name(getattr(worker, "_PLAY_TASK", "arena-play"))
        await asyncio.sleep(0)  # the match is inside create_subprocess_exec; its pipes are not
        await host._shutdown()  # as close() runs it: this task is the current one
        return match.cancelled()

    try:
        cancelled = host._call(scenario(), timeout=15)
    except concurrent.futures.TimeoutError:
        print("the shutdown hung on the bot being started", flush=True)
        os._exit(3)
    host.closed = True
    host._stop_loop()
    print("closed", cancelled, launched, flush=True)
"""


@pytest.mark.parametrize("body", [IDLE, STARTING_A_BOT], ids=["idle", "starting-a-bot"])
def test_a_worker_closes_promptly_and_cleanly(body: str) -> None:
    script = "import asyncio, concurrent.futures, faulthandler, os\n"
    script += "faulthandler.enable()\n"
    script += "from arena.tournament import worker\nfrom arena.tournament.worker import WorkerThread\n"
    script += textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    if body is STARTING_A_BOT:
        assert done.stdout.strip() == "closed True []", done.stdout  # cut short before it returned
    else:
        assert done.stdout.strip() == "closed", done.stdout
