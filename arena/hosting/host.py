"""The match host: one referee server and the bot processes of its tables, for one match or many.

Every command that plays bots as processes goes through :class:`MatchHost` (``arena match``,
``arena evaluate``, a tournament worker -- local pool or Dask -- and ``arena serve``'s lobby), so
what hosting a match involves is written once:

- the referee listens on a private Unix socket (and, for remote bots, on ``listen``);
- bots run sandboxed (bubblewrap, :mod:`arena.sandbox.bwrap`) unless the host or the match says
  ``sandbox=None``; :class:`~arena.sandbox.bwrap.SandboxUnavailableError` before anything starts
  when that is impossible here;
- every seat's session (token) is minted before any bot is launched;
- the match is told at once when a bot process exits (:meth:`BotProcess.watch_exit` ->
  :meth:`Match.seat_process_exited`), even before the match exists, so a bot that dies before
  connecting is reported at once rather than after the connect timeout;
- the match gets each seat's probe (crashed / frozen), evidence (stderr tail), settle (wait for a
  crashed bot's last words) and CPU time (for the CPU clock and the think-time statistics);
- kept-running bots (:attr:`LocalSeat.persistent`) are reused across matches and restarted when
  they died or forfeited (deterministically: a forfeit always means a fresh process next time),
  and before a match of a seed they have already played: every seating of a seed has the same
  dice, and a bot sees every throw of its games, so a process that remembered them would play
  the next seating knowing its dice (a fresh one is not counted in :attr:`restarts`);
- a match that did not complete (an error, a cancellation) leaves no bot in doubt: its kept-running
  bots are stopped too; bots launched for one match are stopped (all at once) after it;
- :meth:`close` stops every bot and the referee.  A process that must die now (a signal, its parent
  gone) calls :func:`arena.sandbox.kill_all_bots` (the tournament worker does).

Several matches may run on one host at once (``arena evaluate``'s tables) as long as they do not
share a kept-running bot (give their seats different ``identity``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules
from arena.referee import MatchResult, RefereeConfig, RefereeServer, TimeControl
from arena.referee.faults import Reason, process_forfeit
from arena.referee.match import Match
from arena.referee.server import TlsFiles
from arena.referee.sessions import BotSession
from arena.sandbox import BotProcess, SandboxLimits, require_bwrap
from arena.sandbox.launcher import live_bots

from . import logkeep
from .seats import LocalSeat
from .sockdir import SOCKET_NAME, SocketId, folder_id, make_sock_dir, remove_own, socket_id, sweep_stale

log = logging.getLogger(__name__)

STOP_GRACE = 0.5
"""Seconds a bot gets to exit by itself when the host stops it (then SIGTERM, then SIGKILL)."""

KEPT_LIMIT = 16
"""Kept-running bot processes a host keeps between its matches, at most: past that the least
recently used are stopped (those of a match in play never).  Without a bound every bot version a
long-running host ever played stayed running for as long as the host (``arena serve``: each
upload's version, retired or not, up to its sandbox's memory limit apiece)."""

TRIM_EVERY = 10.0
"""Seconds between two trims of the host's log folder (:mod:`arena.hosting.logkeep`), at most."""


class _Host(Enum):
    DEFAULT = 0


HOST_DEFAULT: Literal[_Host.DEFAULT] = _Host.DEFAULT
"""``play(sandbox=HOST_DEFAULT)``: the host's own sandbox setting."""

PoolKey = tuple[Hashable, str, tuple[str, ...], SandboxLimits | None, int]


@dataclass
class _Pooled:
    proc: BotProcess
    session: BotSession
    seeds: set[int] = field(default_factory=set)  # the match seeds this process has played


def departed(session: BotSession) -> tuple[Reason, str] | None:
    """A seat the host launched nothing for (a remote bot, the human seat): why its client ended
    the stream, when the client said so (:attr:`BotSession.departed`), as a ``disconnected``
    forfeit's detail."""
    return (Reason.DISCONNECTED, session.departed) if session.departed else None


def probe(proc: BotProcess | None) -> tuple[Reason, str] | None:
    """How the bot process has ended or stalled, in the referee's terms (None: running, or no
    process: a remote bot).  The one place the launcher's report is read for a match."""
    return process_forfeit(proc.probe()) if proc is not None else None


class MatchHost:
    """A referee server and the bot processes of its matches (see the module docstring).

    ``sandbox``: the limits bots run under by default (None: unsandboxed, for trusted bots only);
    ``log_dir``: where each bot's stdout/stderr logs go (None: kept in memory only, for the
    evidence); ``server``: a referee server to use instead of a new one (for tests).
    """

    def __init__(
        self,
        *,
        sandbox: SandboxLimits | None = SandboxLimits(),  # noqa: B008 (frozen)
        config: RefereeConfig | None = None,
        log_dir: Path | None = None,
        server: RefereeServer | None = None,
        label: str = "bot",
        kept_limit: int = KEPT_LIMIT,
    ) -> None:
        self.sandbox = sandbox
        self.kept_limit = kept_limit
        self.log_dir = log_dir
        self.label = label
        self.server = server if server is not None else RefereeServer(config)
        self.address = ""
        self.sock_dir: Path | None = None
        # the folder and socket the referee serves on (socket_id); None: it serves elsewhere
        self._socket_id: SocketId | None = None
        self._folder_id: tuple[int, int] | None = None  # sock_dir as made (folder_id)
        self._socket_lock = asyncio.Lock()  # one replacement at a time (matches start at once)
        self.pool: dict[PoolKey, _Pooled] = {}  # least recently used first
        self._busy: Counter[PoolKey] = Counter()  # the pool's keys in matches in play
        self.launched = 0  # bot processes started
        self.restarts = 0  # kept-running bots started again (they had died or forfeited)
        self.grace = STOP_GRACE
        self.log_bytes = logkeep.MAX_BYTES  # the log folder's bounds (arena.hosting.logkeep)
        self.log_files = logkeep.MAX_FILES
        self.trim_every = TRIM_EVERY
        self._trimmed_at: float | None = None
        self._ever: set[PoolKey] = set()
        self._relay: dict[BotProcess, tuple[_ExitRelay, int]] = {}

    async def start(self, *, listen: str | None = None, tls: TlsFiles | None = None) -> str:
        """Start the referee on a private Unix socket (and on ``listen``, with ``tls``, for remote
        bots: then ``self.server.listen_address`` is the bound address); return the socket's
        address.  :class:`SandboxUnavailableError` first when the host's sandbox cannot run."""
        if self.sandbox is not None:
            require_bwrap()
        sweep_stale()  # folders of hosts that were killed (SIGKILL) before they could clean up
        self.sock_dir = make_sock_dir()
        self._folder_id = folder_id(self.sock_dir)
        unix = f"unix:{self.sock_dir / SOCKET_NAME}"
        if listen is None:
            self.address = await self.server.start(unix)
        else:
            self.address = await self.server.start(unix, listen=listen, tls=tls)
        if self.address == unix:  # (a server given to it may serve elsewhere)
            self._socket_id = socket_id(self.sock_dir)
        return self.address

    async def play(
        self,
        seats: Sequence[LocalSeat | BotSession],
        seed: int,
        control: TimeControl,
        *,
        match_id: str | None = None,
        on_event: Callable[[Match], None] | None = None,
        sandbox: SandboxLimits | Literal[_Host.DEFAULT] | None = HOST_DEFAULT,
        rules: Rules = DEFAULT_RULES,
        keep: bool = True,
    ) -> MatchResult:
        """Play one match with ``seats[k]`` in seat k: launch (or reuse) its bots, play, and
        stop what the match launched for itself.  ``sandbox`` overrides the host's setting for
        this match's bots; ``rules`` are the game's rules (standard unless a variant).
        ``keep=False``: its kept-running bots are stopped too before this returns (another
        seating of its seed is to be played, maybe on another host: a process that has seen
        these dice must not live on meanwhile)."""
        limits = self.sandbox if sandbox is HOST_DEFAULT else sandbox
        if any(isinstance(s, LocalSeat) for s in seats):  # bots to launch
            if limits is not None:
                require_bwrap()
            await self._keep_socket()
        relay = _ExitRelay()
        procs: list[BotProcess | None] = [None] * len(seats)
        sessions: list[BotSession] = []
        keys: list[PoolKey | None] = [None] * len(seats)
        launch: list[tuple[int, BotProcess, BotSession, str]] = []
        fresh: list[tuple[int, BotProcess]] = []
        try:
            seen: dict[tuple[Hashable, str, tuple[str, ...]], int] = {}
            for k, seat in enumerate(seats):  # every token before any bot starts
                if isinstance(seat, BotSession):
                    sessions.append(seat)
                    continue
                bot = seat.bot
                if not seat.persistent:
                    session = self.server.session(bot.name)
                    one = self._process(seat, limits)
                    launch.append((k, one, session, f"{match_id or 'match'}-seat{k}-{bot.name}"))
                    fresh.append((k, one))
                    procs[k] = one
                else:
                    ident = (seat.identity, bot.name, bot.command)
                    n = seen[ident] = seen.get(ident, -1) + 1
                    key: PoolKey = (*ident, limits, n)
                    keys[k] = key
                    self._busy[key] += 1
                    entry = self.pool.get(key)
                    failed = entry is not None and entry.proc.probe() is not None  # died while idle
                    # it has seen these dice (another seating of this seed): a fresh process
                    known_dice = entry is not None and not failed and seed in entry.seeds
                    if failed or known_dice:
                        await self._drop(key)
                        entry = None
                    if entry is None:
                        session = self.server.session(bot.name, persistent=True)
                        entry = _Pooled(self._process(seat, limits), session)
                        self.restarts += key in self._ever and not known_dice
                        self._ever.add(key)
                        self.pool[key] = entry
                        stem = f"{seat.label or self.label}-{bot.name}-{self.launched + len(launch) + 1}"
                        launch.append((k, entry.proc, entry.session, stem))
                    self.pool[key] = self.pool.pop(key)  # the most recently used now
                    procs[k], session = entry.proc, entry.session
                    entry.seeds.add(seed)
                sessions.append(session)
            for k, seated in enumerate(procs):
                if seated is not None:
                    self._relay[seated] = (relay, k)
            if launch:
                self._trim_logs()
            for _k, starting, token_of, stem in launch:
                self.launched += 1
                await starting.start(self.address, token_of.token, log_stem=stem)
                starting.watch_exit(self._exited_handler(starting))

            async def settle(seat: int) -> None:
                if (p := procs[seat]) is not None:
                    await p.settle()

            result = await self.server.play(
                sessions,
                seed,
                control,
                match_id=match_id,
                probe=lambda seat: (
                    probe(procs[seat]) if procs[seat] is not None else departed(sessions[seat])
                ),
                evidence=lambda seat: dict(p.evidence()) if (p := procs[seat]) is not None else {},
                settle=settle,
                on_event=on_event,
                cpu_time=lambda seat: p.cpu_time() if (p := procs[seat]) is not None else None,
                on_start=relay.start,
                rules=rules,
            )
        except BaseException:
            for used in keys:  # a match that did not complete leaves no kept-running bot in doubt
                if used is not None:
                    await self._drop(used)
            raise
        finally:
            for used in keys:
                if used is not None:
                    self._busy[used] -= 1
            self._busy = +self._busy  # (no key at zero)
            for seated in procs:
                if seated is not None:
                    self._relay.pop(seated, None)
            # All at once; a bot that never connected has nothing to finish: it is ended at once.
            await asyncio.gather(
                *(proc.stop(grace=self.grace if relay.connected(k) else 0.0) for k, proc in fresh),
                return_exceptions=True,
            )
        # a bot that failed is restarted before it plays again; with keep=False none lives on
        forfeited = {keys[f.seat] for f in result.forfeits}
        if not keep:  # (its next process is not a restart: nothing went wrong with it)
            self._ever.difference_update(key for key in keys if key not in forfeited)
        dropped = keys if not keep else list(forfeited)
        await asyncio.gather(*(self._drop(key) for key in dropped if key is not None))
        await self._evict()
        return result

    def _trim_logs(self) -> None:
        """Before bots are launched (every :attr:`trim_every` seconds at most): the oldest logs of
        the log folder go until it is within :attr:`log_bytes` and :attr:`log_files`; the logs
        of this process's running bots stay."""
        now = time.monotonic()
        recent = self._trimmed_at is not None and now - self._trimmed_at < self.trim_every
        if self.log_dir is None or recent:
            return
        self._trimmed_at = now
        running = [p for bot in live_bots() for p in (bot.stdout_path, bot.stderr_path) if p is not None]
        done = logkeep.trim(self.log_dir, max_bytes=self.log_bytes, max_files=self.log_files, keep=running)
        if done.files:
            log.info("bot logs: %d oldest deleted from %s (%d bytes)", done.files, self.log_dir, done.bytes)

    async def _evict(self) -> None:
        """Stop the least recently used kept-running bots beyond :attr:`kept_limit` (never one
        that a match in play uses)."""
        idle = [key for key in self.pool if key not in self._busy]
        excess = len(self.pool) - self.kept_limit
        if excess > 0:
            self._ever.difference_update(idle[:excess])  # (its next process is not a restart)
            await asyncio.gather(*(self._drop(key) for key in idle[:excess]))

    async def _keep_socket(self) -> None:
        """Before bots are launched: if the referee's socket was removed from outside this
        process (a cleaner of old files in /tmp, an older arena's sweep), serve on a new one in a
        new folder, so the bots this match launches can connect.  Without it every later bot
        "crashed before connecting" and was blamed for the arena's loss.  Kept-running bots are
        connected already and keep their streams (the old listener keeps serving)."""
        async with self._socket_lock:  # a match starting meanwhile waits for the new address
            if self._socket_id is None or self.sock_dir is None:
                return
            if socket_id(self.sock_dir) == self._socket_id:
                return
            old, old_id = self.sock_dir, self._folder_id
            new = make_sock_dir()
            try:
                address = await self.server.add_address(f"unix:{new / SOCKET_NAME}")
            except BaseException:
                shutil.rmtree(new, ignore_errors=True)
                raise
            self.sock_dir, self.address = new, address
            self._socket_id, self._folder_id = socket_id(new), folder_id(new)
            remove_own(old, old_id)  # whatever was left of it (not a folder someone made since)
            log.warning(
                "the referee's socket in %s was removed from outside this process; "
                "serving on a new one in %s",
                old,
                new,
            )

    def _process(self, seat: LocalSeat, sandbox: SandboxLimits | None) -> BotProcess:
        return BotProcess(
            seat.bot.name,
            seat.bot.command,
            log_dir=self.log_dir,
            extra_env=seat.extra_env,
            sandbox=sandbox,
            hide=self._arena_files() if sandbox is not None else (),
        )

    def _arena_files(self) -> list[Path]:
        """The arena's own files a sandboxed bot must not see, should they lie in its directory (a
        bot played by its path, next to the default ``./arena-data``): the data directory, the
        SQLite database's files and the bots' log folder."""
        # (here, not at the top: a tournament worker starts without the store; test_worker_imports)
        from arena.store.location import arena_home, database_url, plain_sqlite_path

        paths = [arena_home().resolve()]
        with contextlib.suppress(Exception):  # (a URL that is no plain SQLite file: not here)
            db = plain_sqlite_path(database_url())
            if db is not None:
                paths += [db.with_name(db.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
        if self.log_dir is not None:
            paths.append(self.log_dir.resolve())
        return paths

    def _exited_handler(self, proc: BotProcess) -> Callable[[str], None]:
        def exited(how: str) -> None:
            found = self._relay.get(proc)
            if found is not None:  # else idle between matches: the next match's probe sees it
                relay, seat = found
                relay.exited(seat, how)

        return exited

    async def release(self, identities: Collection[Hashable] | None = None) -> None:
        """Stop the kept-running bots (of these identities only, when given)."""
        for key in list(self.pool):
            if identities is None or key[0] in identities:
                await self._drop(key)

    async def _drop(self, key: PoolKey) -> None:
        entry = self.pool.pop(key, None)
        if entry is not None:
            self.server.revoke(entry.session)
            try:
                with contextlib.suppress(Exception):
                    await entry.proc.stop(grace=self.grace)
            finally:
                # its process is gone: no stream will ask for its goodbye (a bot that crashed
                # never does), so the registry keeps nothing of it, nor of the match it was in
                self.server.forget(entry.session)

    async def close(self, grace: float = 0.2) -> None:
        """Stop every kept-running bot (all at once), then the referee (``grace`` seconds for the
        streams still open)."""
        await asyncio.gather(*(self._drop(key) for key in list(self.pool)), return_exceptions=True)
        await self.server.stop(grace)
        if self.sock_dir is not None:
            remove_own(self.sock_dir, self._folder_id)


class _ExitRelay:
    """Tells one match when a bot process of it exits (see :meth:`Match.seat_process_exited`); an
    exit before the match exists (while the other bots start) is kept and told at its start."""

    def __init__(self) -> None:
        self.match: Match | None = None
        self.early: dict[int, str] = {}

    def exited(self, seat: int, how: str) -> None:
        if self.match is None:
            self.early.setdefault(seat, how)
        else:
            self.match.seat_process_exited(seat, how)

    def start(self, match: Match) -> None:
        self.match = match
        for seat, how in self.early.items():
            match.seat_process_exited(seat, how)

    def connected(self, seat: int) -> bool:
        """Whether the seat's bot ever connected to its match."""
        return self.match is not None and self.match.links[seat].attached.is_set()
