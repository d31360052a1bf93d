"""A worker's shutdown ends promptly and cleanly: idle, while its match is starting a bot, and
with a release of kept bots queued behind its match.

Found with a loop of ``arena serve`` runs stopped by SIGTERM at random moments: about one stop in
fifteen took 5 s (the coordinator's grace before SIGKILL) instead of 0.6 s.  The worker's
shutdown cancelled every task of its loop at once, asyncio's own task that connects a new
process's pipes included; a match cut short inside ``create_subprocess_exec`` then has asyncio
kill the process and wait for it, a wait that only that pipe task ends: it never ended.  And
closing even an idle worker crashed its process (SIGSEGV): gRPC's own tasks were cancelled
before its server was stopped.  And a closing worker waited for a release of kept bots before it
cancelled its match, while the release waited for the match (one lock): a tournament's local
cluster worker, stopped by a Ctrl-C, was killed by its nanny after 4 s ("Worker process still
alive", a clean-clone run).  Each case runs in a process of its own (a crash must not take pytest
with it).
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

RELEASE_BEHIND_A_MATCH = """
    worker.RELEASE_WAIT = 600.0  # a release that is not let through waits the whole time
    host = WorkerThread(None, None)
    released = []

    async def a_long_match():  # a match holds the host's lock while it plays
        assert host._lock is not None
        async with host._lock:
            await asyncio.sleep(600)

    async def record_release(version_ids):
        released.append(version_ids)

    host.state.release = record_release

    async def begin():
        asyncio.ensure_future(a_long_match()).set_name(worker._PLAY_TASK)
        await asyncio.sleep(0)

    host._call(begin(), timeout=15)
    host.release([7])  # the coordinator's release at the end of its run: queued behind the match
    try:
        host._call(host._shutdown(), timeout=60)
    except concurrent.futures.TimeoutError:
        print("the shutdown waited for the match to end", flush=True)
        os._exit(3)
    host.closed = True
    host._stop_loop()
    print("closed", released, flush=True)
"""


@pytest.mark.parametrize(
    "body",
    [IDLE, STARTING_A_BOT, RELEASE_BEHIND_A_MATCH],
    ids=["idle", "starting-a-bot", "release-behind-a-match"],
)
def test_a_worker_closes_promptly_and_cleanly(body: str) -> None:
    script = "import asyncio, concurrent.futures, faulthandler, os\n"
    script += "faulthandler.enable()\n"
    script += "from arena.tournament import worker\nfrom arena.tournament.worker import WorkerThread\n"
    script += textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    if body is STARTING_A_BOT:
        assert done.stdout.strip() == "closed True []", done.stdout  # cut short before it returned
    elif body is RELEASE_BEHIND_A_MATCH:
        assert done.stdout.strip() == "closed [[7]]", done.stdout  # the match cancelled, the release done
    else:
        assert done.stdout.strip() == "closed", done.stdout
