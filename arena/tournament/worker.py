"""The worker side: one process that plays matches one after another.

Each worker process has one :class:`~arena.hosting.MatchHost` (its own referee on a private Unix
socket, and a pool of bot processes kept running across matches where the bot version allows it:
persistent sessions).  A bot that forfeited is restarted before its next match.  Everything is
reaped when the worker exits.

A worker of a local pool (:func:`init_worker`) dies with its coordinator, whatever kills it: the
kernel sends it SIGTERM when the coordinator dies (``PR_SET_PDEATHSIG``) and a thread watches its
parent pid as a backstop.  On SIGTERM, SIGINT or SIGHUP, or when its coordinator is gone, it
cancels the match in progress, stops every bot (:meth:`BotProcess.stop`) and exits at once
(status 128 + the signal), never waiting for a coordinator that will not answer.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Collection, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from arena import lifecycle
from arena.engine.variants import by_version
from arena.hosting import BotSpec, LocalSeat, MatchHost
from arena.live.channel import LIVE_ENV
from arena.live.publish import observer_for
from arena.live.remote import LiveTarget
from arena.referee import MatchResult, RefereeConfig
from arena.sandbox import kill_all_bots

from .affinity import Pinning
from .task import MatchTask, pack_replay

T = TypeVar("T")


def seats_of(task: MatchTask) -> list[LocalSeat]:
    """The seats of a tournament match: a kept-running bot is reused only for the very same bot
    version, name and program (version ids alone are not enough where one worker serves several
    databases: a Dask cluster; the host's pool also keys on the sandbox)."""
    return [
        LocalSeat(
            BotSpec(s.name, s.command),
            persistent=s.persistent,
            identity=s.version_id,
            label=f"w{os.getpid()}",
        )
        for s in task.seats
    ]


async def play_on(host: MatchHost, task: MatchTask, live: LiveTarget | None = None) -> MatchResult:
    """Play one tournament match on ``host`` (its bots under the tournament's sandbox, clock and
    rules); its events go to the hub's UDP endpoint ``live`` (a cluster's match), else to the
    live channel when one is set (:mod:`arena.live.publish`)."""
    return await host.play(
        seats_of(task),
        task.seed,
        task.control,
        match_id=task.key,
        on_event=observer_for(task.match_id, live),
        sandbox=task.sandbox,
        rules=by_version(task.rules),
        keep=not task.seed_again,
    )


_host: WorkerThread | None = None
_ending = threading.Lock()
DYING_GRACE = 0.1
"""Seconds each bot gets to exit by itself when its worker is dying (then SIGTERM, SIGKILL)."""
DYING_TIMEOUT = 10.0
"""Seconds a dying worker spends at most on stopping its bots before it exits regardless."""


def init_worker(
    log_dir: str | None,
    config: RefereeConfig | None = None,
    parent_pid: int | None = None,
    run_marker: str | None = None,
    pinning: Pinning | None = None,
    live_socket: str | None = None,
) -> None:
    """Process-pool initializer: start this worker's referee and bot pool (on a loop thread of
    their own), and make the worker stop with its coordinator ``parent_pid`` or on a signal.
    With a ``pinning``, the worker first pins itself to its core (its bots inherit it).

    ``run_marker`` is set in the environment as ``ARENA_RUN`` (inherited by unsandboxed bots),
    so a later run can find anything this one left behind; ``live_socket`` as ``ARENA_LIVE_SOCKET``
    (this worker's matches are then published live, :func:`arena.live.publish.observer_for`).
    """
    global _host
    from .runfile import RUN_ENV

    if run_marker:
        os.environ[RUN_ENV] = run_marker
    if live_socket:
        os.environ[LIVE_ENV] = live_socket
    if pinning is not None:
        pinning.pin_this_process()
    for sig in lifecycle.STOP_SIGNALS:  # (until here a signal simply ends the worker: no bot yet)
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _on_signal)
    # spawned with SIGINT blocked (arena.tournament.runner.interrupts_held): a Ctrl-C that came
    # while this process imported is delivered now, to the handler above.  Before the host's
    # thread is made: it keeps the mask it is made with, and so would every bot it starts (they
    # all had SIGINT blocked, an outside review found).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _host = WorkerThread(Path(log_dir) if log_dir else None, config)
    atexit.register(shutdown_worker)
    if parent_pid is not None:
        # The coordinator spawns its workers from the thread that runs the tournament, which
        # outlives them (the pool is shut down before it returns), so the signal means its death.
        lifecycle.set_parent_death_signal(signal.SIGTERM)
        lifecycle.ParentWatch(parent_pid, lambda: die(signal.SIGTERM)).start()
        if not lifecycle.parent_alive(parent_pid):  # it died before the signal was armed
            die(signal.SIGTERM)


def _on_signal(signum: int, _frame: object) -> None:
    die(signum)


def die(signum: int) -> None:
    """Stop the match in progress and every bot, then end this worker process at once with
    status 128 + ``signum`` (from any thread but the worker's loop).  Returns at once when the
    worker is already ending (a second call, or the normal shutdown in progress)."""
    if not _ending.acquire(blocking=False):
        return
    try:
        host = _host
        if host is not None:
            host.state.grace = DYING_GRACE
            host.close(timeout=DYING_TIMEOUT)
    finally:
        kill_all_bots()  # whatever the host could not stop in time (its loop stuck): killed now
        os._exit(lifecycle.exit_status(signum))


def shutdown_worker() -> None:
    """Reap this worker's bots (also runs at interpreter exit)."""
    global _host
    if not _ending.acquire(blocking=False):  # die() is at it
        return
    host, _host = _host, None
    try:
        if host is not None:
            with contextlib.suppress(Exception):
                host.close()
    finally:
        _ending.release()


def play_task(task: MatchTask) -> MatchResult:
    """Process-pool task: play one match in this worker."""
    if _host is None:
        init_worker(None)
    assert _host is not None
    return _host.play(task, _host.log_dir)


_RELEASE_TASK = "arena-release"
_PLAY_TASK = "arena-play"
RELEASE_WAIT = 10.0
"""Seconds a closing :class:`WorkerThread` waits for a release in flight to stop its bots."""


class WorkerThread:
    """A :class:`~arena.hosting.MatchHost` (unsandboxed by default: each match says its sandbox) on
    an event loop of its own thread, for hosts that call
    :meth:`play` from threads of their own (a Dask worker's task threads).

    Matches are played one at a time.  The loop keeps running between matches, so the referee
    answers its kept-running bots' keepalives, and the bots are children of a thread that lives
    as long as the process (a sandbox's ``--die-with-parent`` follows the launching thread).
    """

    def __init__(self, log_dir: Path | None, config: RefereeConfig | None) -> None:
        self.config = config
        self.log_dir = log_dir  # where bot logs go unless play() says otherwise
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="arena-worker-loop", daemon=True)
        self.thread.start()
        self.state = MatchHost(sandbox=None, config=config, log_dir=log_dir)
        self._lock: asyncio.Lock | None = None
        self.closed = False
        try:
            self._call(self._start())
        except BaseException:
            self._stop_loop()
            raise

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self) -> None:
        self._lock = asyncio.Lock()
        await self.state.start()

    async def _play(self, task: MatchTask, log_dir: Path | None, live: LiveTarget | None) -> MatchResult:
        assert self._lock is not None
        current = asyncio.current_task()
        if current is not None:
            current.set_name(_PLAY_TASK)
        async with self._lock:
            self.state.log_dir = log_dir
            return await play_on(self.state, task, live)

    def play(
        self, task: MatchTask, log_dir: Path | None = None, live: LiveTarget | None = None
    ) -> MatchResult:
        """Play one match (waiting for the one in progress, if any); bot logs go to ``log_dir``,
        live events to ``live`` (see :func:`play_on`).  The result comes with its replay packed
        for storage (:func:`arena.store.tournaments.pack_replay`)."""
        if self.closed:
            raise RuntimeError("this worker is closed")
        return pack_replay(self._call(self._play(task, log_dir, live)))  # compressed here, not by the writer

    async def _release(self, version_ids: Collection[int] | None) -> None:
        assert self._lock is not None
        task = asyncio.current_task()
        if task is not None:
            task.set_name(_RELEASE_TASK)
        async with self._lock:
            await self.state.release(version_ids)

    def release(self, version_ids: Collection[int] | None = None) -> None:
        """Stop kept-running bots once no match is using them (returns at once)."""
        if not self.closed:
            asyncio.run_coroutine_threadsafe(self._release(version_ids), self.loop)

    def close(self, timeout: float = 30.0) -> None:
        """Stop every bot, the referee and the loop."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            self._call(self._shutdown(), timeout)
        self._stop_loop()

    async def _shutdown(self) -> None:
        """Cancel a match in progress, let a release in flight finish stopping its bots (a
        release is fire-and-forget, and the host often closes right after asking for one), then
        stop every bot left and the referee, and only then cancel what is still pending.  No bot
        process outlives the loop.

        The order matters three times.  The matches go first and alone: a match cut short while
        it starts a bot has asyncio kill that process and wait for it, which needs asyncio's own
        task connecting the process's pipes to finish (cancelled along with everything at once, it
        never did: the wait never ended, and the worker lived until SIGKILLed).  A release waits
        for the match in progress (one lock), so it can only finish once the match is cancelled:
        waiting for the release first made a stopping tournament's local cluster worker wait for
        its match to end, and its nanny killed it after 4 s ("Worker process still alive",
        seen in a clean-clone run).  And gRPC's own tasks are never cancelled under a running
        server: the referee is stopped first (cancelling them first made the server's stop crash
        the process with a segmentation fault)."""
        current = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not current]
        plays = [t for t in rest if t.get_name() == _PLAY_TASK]
        for t in plays:
            t.cancel()
        await asyncio.gather(*plays, return_exceptions=True)
        releases = [t for t in rest if t.get_name() == _RELEASE_TASK]
        if releases:
            await asyncio.wait(releases, timeout=RELEASE_WAIT)
        await self.state.close()
        left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
        for t in left:
            t.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5.0)
        if not self.thread.is_alive():
            self.loop.close()
