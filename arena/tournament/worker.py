"""The worker side: one process that plays matches one after another.

Each worker process hosts its own referee (on a private Unix socket) and a pool of bot processes
kept running across matches where the bot version allows it (persistent sessions).  A bot that
forfeited is restarted before its next match.  Everything is reaped when the worker exits.

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
import shutil
import signal
import tempfile
import threading
from collections.abc import Collection, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from arena import lifecycle
from arena.referee import MatchResult, RefereeConfig, RefereeServer, TimeControl
from arena.referee.sessions import BotSession
from arena.sandbox import BotProcess, SandboxLimits
from arena.store.tournaments import MatchTask, SeatTask

T = TypeVar("T")

# A kept-running bot is reused only for the very same program, name and sandbox: version ids alone
# are not enough where one worker serves several databases (a Dask cluster).
PoolKey = tuple[int, str, tuple[str, ...], SandboxLimits | None, int]


class WorkerState:
    """The referee and the bot pool of one worker process."""

    def __init__(self, log_dir: Path | None, config: RefereeConfig | None) -> None:
        self.log_dir = log_dir
        self.sock_dir = Path(tempfile.mkdtemp(prefix="arena-w-"))
        self.server = RefereeServer(config)
        self.address = ""
        self.pool: dict[PoolKey, tuple[BotProcess, BotSession]] = {}
        self.launched = 0
        self.grace = 0.5  # seconds a bot gets to exit by itself when stopped (less when dying)

    async def start(self) -> None:
        """Start the worker's referee."""
        self.address = await self.server.start(f"unix:{self.sock_dir / 'referee.sock'}")

    async def _launch(
        self, seat: SeatTask, session: BotSession, stem: str, sandbox: SandboxLimits | None
    ) -> BotProcess:
        proc = BotProcess(seat.name, seat.command, log_dir=self.log_dir, sandbox=sandbox)
        self.launched += 1
        await proc.start(self.address, session.token, log_stem=f"{stem}-{seat.name}-{self.launched}")
        return proc

    async def play(self, task: MatchTask) -> MatchResult:
        """Play one match, reusing or launching the bots it needs."""
        sessions: list[BotSession] = []
        procs: list[BotProcess] = []
        fresh: list[tuple[BotProcess, BotSession]] = []
        seen: dict[tuple[int, str, tuple[str, ...]], int] = {}
        keys: list[PoolKey | None] = []
        try:
            for seat in task.seats:
                ident = (seat.version_id, seat.name, seat.command)
                n = seen.get(ident, 0)
                seen[ident] = n + 1
                if seat.persistent:
                    key: PoolKey = (*ident, task.sandbox, n)
                    entry = self.pool.get(key)
                    if entry is None or entry[0].probe() is not None:
                        if entry is not None:
                            await self._drop(key)
                        session = self.server.session(seat.name, persistent=True)
                        proc = await self._launch(seat, session, f"w{id(self) % 1000}", task.sandbox)
                        entry = (proc, session)
                        self.pool[key] = entry
                    keys.append(key)
                    procs.append(entry[0])
                    sessions.append(entry[1])
                else:
                    session = self.server.session(seat.name)
                    proc = await self._launch(seat, session, task.key, task.sandbox)
                    fresh.append((proc, session))
                    keys.append(None)
                    procs.append(proc)
                    sessions.append(session)
            result = await self.server.play(
                sessions,
                task.seed,
                TimeControl(task.move_time, task.bank, cpu=task.cpu_clock),
                match_id=task.key,
                probe=lambda s: procs[s].probe(),
                evidence=lambda s: procs[s].evidence(),
                settle=lambda s: procs[s].settle(),
                cpu_time=lambda s: procs[s].cpu_time(),
            )
        except BaseException:
            for k in keys:  # a match that did not complete leaves no bot in doubt
                if k is not None:
                    await self._drop(k)
            raise
        finally:
            for proc, _session in fresh:
                with contextlib.suppress(Exception):
                    await proc.stop(grace=self.grace)
        for f in result.forfeits:  # a bot that failed is restarted before it plays again
            failed = keys[f.seat]
            if failed is not None:
                await self._drop(failed)
        return result

    async def release(self, version_ids: Collection[int] | None = None) -> None:
        """Stop the kept-running bots (of these bot versions only, when given)."""
        for key in list(self.pool):
            if version_ids is None or key[0] in version_ids:
                await self._drop(key)

    async def _drop(self, key: PoolKey) -> None:
        entry = self.pool.pop(key, None)
        if entry is not None:
            proc, session = entry
            self.server.revoke(session)
            with contextlib.suppress(Exception):
                await proc.stop(grace=self.grace)

    async def close(self) -> None:
        """Stop every bot (all at once) and the referee."""
        await asyncio.gather(*(self._drop(key) for key in list(self.pool)), return_exceptions=True)
        await self.server.stop(0.2)
        shutil.rmtree(self.sock_dir, ignore_errors=True)


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
) -> None:
    """Process-pool initializer: start this worker's referee and bot pool (on a loop thread of
    their own), and make the worker stop with its coordinator ``parent_pid`` or on a signal.

    ``run_marker`` is set in the environment as ``ARENA_RUN`` (inherited by unsandboxed bots),
    so a later run can find anything this one left behind.
    """
    global _host
    from .runfile import RUN_ENV

    if run_marker:
        os.environ[RUN_ENV] = run_marker
    _host = WorkerThread(Path(log_dir) if log_dir else None, config)
    atexit.register(shutdown_worker)
    for sig in lifecycle.STOP_SIGNALS:  # (until here a signal simply ends the worker: no bot yet)
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _on_signal)
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
RELEASE_WAIT = 10.0
"""Seconds a closing :class:`WorkerThread` waits for a release in flight to stop its bots."""


class WorkerThread:
    """A :class:`WorkerState` on an event loop of its own thread, for hosts that call
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
        self.state = WorkerState(log_dir, config)
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

    async def _play(self, task: MatchTask, log_dir: Path | None) -> MatchResult:
        assert self._lock is not None
        async with self._lock:
            self.state.log_dir = log_dir
            return await self.state.play(task)

    def play(self, task: MatchTask, log_dir: Path | None = None) -> MatchResult:
        """Play one match (waiting for the one in progress, if any); bot logs go to ``log_dir``."""
        if self.closed:
            raise RuntimeError("this worker is closed")
        return self._call(self._play(task, log_dir))

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
        """Let a release in flight finish stopping its bots (a release is fire-and-forget, and
        the host often closes right after asking for one), cancel anything else (a match in
        progress), then stop every bot left and the referee.  No bot process outlives the loop."""
        current = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not current]
        releases = [t for t in rest if t.get_name() == _RELEASE_TASK]
        if releases:
            await asyncio.wait(releases, timeout=RELEASE_WAIT)
        for t in rest:
            t.cancel()
        await asyncio.gather(*rest, return_exceptions=True)
        await self.state.close()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5.0)
        if not self.thread.is_alive():
            self.loop.close()
