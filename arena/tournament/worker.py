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
from pathlib import Path

from arena.referee import MatchResult, RefereeConfig, RefereeServer, TimeControl
from arena.referee.sessions import BotSession
from arena.sandbox import BotProcess, SandboxLimits
from arena.store.tournaments import MatchTask, SeatTask


class WorkerState:
    """The referee and the bot pool of one worker process."""

    def __init__(self, log_dir: Path | None, config: RefereeConfig | None) -> None:
        self.log_dir = log_dir
        self.sock_dir = Path(tempfile.mkdtemp(prefix="arena-w-"))
        self.server = RefereeServer(config)
        self.address = ""
        self.pool: dict[tuple[int, int], tuple[BotProcess, BotSession]] = {}
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
        seen: dict[int, int] = {}
        keys: list[tuple[int, int] | None] = []
        try:
            for seat in task.seats:
                n = seen.get(seat.version_id, 0)
                seen[seat.version_id] = n + 1
                if seat.persistent:
                    key = (seat.version_id, n)
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

    async def _drop(self, key: tuple[int, int]) -> None:
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
