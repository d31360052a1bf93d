"""The worker side: one process that plays matches one after another.

Each worker process hosts its own referee (on a private Unix socket) and a pool of bot processes
kept running across matches where the bot version allows it (persistent sessions).  A bot that
forfeited is restarted before its next match.  Everything is reaped when the worker exits.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import shutil
import tempfile
import threading
from collections.abc import Collection, Coroutine
from pathlib import Path
from typing import Any, TypeVar

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
                    await proc.stop(grace=0.5)
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
                await proc.stop(grace=0.5)

    async def close(self) -> None:
        """Stop every bot and the referee."""
        for key in list(self.pool):
            await self._drop(key)
        await self.server.stop(0.2)
        shutil.rmtree(self.sock_dir, ignore_errors=True)


_loop: asyncio.AbstractEventLoop | None = None
_state: WorkerState | None = None


def init_worker(log_dir: str | None, config: RefereeConfig | None = None) -> None:
    """Process-pool initializer: start this worker's event loop and referee."""
    global _loop, _state
    _loop = asyncio.new_event_loop()
    _state = WorkerState(Path(log_dir) if log_dir else None, config)
    _loop.run_until_complete(_state.start())
    atexit.register(shutdown_worker)


def shutdown_worker() -> None:
    """Reap this worker's bots (also runs at interpreter exit)."""
    global _state
    if _loop is not None and _state is not None:
        state, _state = _state, None
        with contextlib.suppress(Exception):
            _loop.run_until_complete(state.close())


def play_task(task: MatchTask) -> MatchResult:
    """Process-pool task: play one match in this worker."""
    if _loop is None or _state is None:
        init_worker(None)
    assert _loop is not None and _state is not None
    return _loop.run_until_complete(_state.play(task))


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
