"""The lobby: remote bots connect in over TCP (optionally TLS) and are matched while online.

``arena serve`` listens for remote bots (registered with ``arena bots add NAME --remote``; they
present their long-lived token, of which only the sha256 is stored).  Whenever a remote bot is
connected and idle, the lobby starts its next match against the configured local opponents,
launched by its :class:`~arena.hosting.MatchHost` (sandboxed unless configured otherwise, on the
wall or the CPU clock); the bot learns of it by the Welcome on its stream.  What it plays next is
its schedule's answer (the format :class:`~arena.tournament.formats.lobby.RemoteStream`): one
match at a time, in seat-rotation sets, every game with dice of its own.  A remote bot whose
connection drops may reconnect with its token within the grace period and continue, its clock
and bank as they were.  Every match is stored like a tournament match (one "lobby" tournament per
``serve`` run), with its replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from arena.hosting import BotSpec, LocalSeat, MatchHost
from arena.referee import MatchResult, RefereeConfig, TimeControl
from arena.referee.hardening import LISTEN_CONNECTIONS
from arena.referee.match import Match
from arena.referee.server import TlsFiles
from arena.referee.sessions import BotSession
from arena.sandbox import SandboxLimits
from arena.store.bots import command_of, remote_versions, resolve_version
from arena.store.db import Database, arena_home
from arena.store.errors import UnknownBotError
from arena.store.lease import Lease
from arena.store.models import BotVersion
from arena.store.tournaments import (
    add_match,
    create_tournament,
    finish_tournament,
    mark_tournament_running,
    record_failure,
    record_result,
)
from arena.tournament.formats import Finished, History, Next, Pairing, Play, Recorded, Settings
from arena.tournament.formats.lobby import RemoteStream


def _opponent(db: Database, ref: str) -> BotVersion:
    """A local opponent: a registered bot (``NAME``, ``NAME@N``) or a sample bot by its name,
    registered under it the first time (as ``arena match`` and tournaments do), so the README's
    ``--opponents greedy,invader`` (and the default, ``greedy``) work on a fresh database too.
    :class:`UnknownBotError` for anything else."""
    from arena.botref import sample_bots, sample_version

    try:
        return resolve_version(db, ref)
    except UnknownBotError:
        sample = sample_bots().get(ref)
        version = sample_version(db, ref, sample) if sample is not None else None
        if version is None:
            raise
        return version


class LobbyError(ValueError):
    """A lobby that cannot be set up as asked."""


def _refuse_repeated(versions: Sequence[BotVersion], names: Sequence[str]) -> None:
    """:class:`LobbyError` when two opponents of a table are one bot version: a tournament holds
    each version once (``--opponents greedy,random,greedy`` ended ``arena serve`` in an
    IntegrityError traceback)."""
    from arena.botref import sample_bots

    seen: dict[int, str] = {}
    for version, name in zip(versions, names, strict=False):
        key = version.id or 0
        if key in seen:
            same = f"{name!r} twice" if name == seen[key] else f"{seen[key]!r} and {name!r}, one bot version,"
            sample = sample_bots().get(name)
            source = str(sample) if sample is not None else "FILE"
            raise LobbyError(
                f"--opponents names {same} but a table's opponents must be different bots: to play "
                f"several copies, register each under its own name (e.g. 'arena bots add {name}-2 {source}')"
            )
        seen[key] = name


MAX_GAMES = 2**31 - 1
"""The most matches per remote bot a lobby takes: its tournament stores the count in an INTEGER
column (PostgreSQL refused 3,000,000,000 with a traceback; 0 plays on while the bot is online)."""


@dataclass(frozen=True)
class LobbyConfig:
    """What ``arena serve`` does."""

    listen: str
    opponents: tuple[str, ...]
    players: int = 2
    games: int = 2  # matches per remote bot (0: keep playing while it is online)
    move_time: float = 1.0
    bank: float = 10.0
    grace: float = 30.0  # seconds a dropped remote bot may take to reconnect
    seed: int = 1
    tls: TlsFiles | None = None
    sandbox: SandboxLimits | None = field(default_factory=SandboxLimits)
    duration: float = 0.0  # stop after this many seconds (0: when every remote bot is done)
    cpu_clock: bool = False  # charge the local opponents' CPU time, not wall-clock time
    max_connections: int = LISTEN_CONNECTIONS  # connections the listener holds at once, all clients

    def __post_init__(self) -> None:
        """:class:`LobbyError` for a ``games`` count the database cannot store."""
        if not 0 <= self.games <= MAX_GAMES:
            raise LobbyError(f"games must be 0 to {MAX_GAMES:,} (0: while it is online), got {self.games}")

    @property
    def control(self) -> TimeControl:
        """The time control of every lobby match."""
        return TimeControl(self.move_time, self.bank, cpu=self.cpu_clock)


@dataclass
class _Remote:
    version: BotVersion
    name: str
    session: BotSession
    schedule: RemoteStream
    matches: list[Recorded] = field(default_factory=list)  # what its schedule handed out, and how it went
    running: asyncio.Task[None] | None = None
    released: bool = False  # its games are all played and it was told goodbye

    def next(self) -> Next:
        """What its schedule says now."""
        return self.schedule.next(History(tuple(self.matches)))


class Lobby:
    """One ``serve`` run."""

    def __init__(
        self,
        db: Database,
        config: LobbyConfig,
        *,
        log: Callable[[str], None] = print,
        on_event: Callable[[Match], None] | None = None,
    ) -> None:
        if not 2 <= config.players <= 4:
            raise LobbyError("players must be 2, 3 or 4")
        if len(config.opponents) < config.players - 1:
            raise LobbyError(f"a {config.players}-player table needs {config.players - 1} opponents")
        self.db = db
        self.config = config
        self.log = log
        self.on_event = on_event
        self.host = MatchHost(
            sandbox=config.sandbox,
            config=RefereeConfig(connect_timeout=60.0, listen_connections=config.max_connections),
        )
        self.server = self.host.server
        self.opponents = [_opponent(db, name) for name in config.opponents[: config.players - 1]]
        self.opponent_names = {
            v.id or 0: name for v, name in zip(self.opponents, config.opponents, strict=False)
        }
        for v in self.opponents:
            if v.kind == "remote":
                raise LobbyError("opponents must be local bots (remote bots are the ones that connect)")
        _refuse_repeated(self.opponents, config.opponents)
        self.remotes: list[_Remote] = []
        self.tournament_id = 0
        self.address = ""
        self.results: list[MatchResult] = []
        self.interrupted = 0  # matches cut short by stop()
        self._stopping = False
        self._lease: Lease | None = None  # the tournament's, held while the lobby plays it

    async def start(self) -> str:
        """Listen, expect every registered remote bot, and create the lobby's tournament."""
        c = self.config
        await self.host.start(listen=c.listen, tls=c.tls)  # first: SandboxUnavailableError
        self.address = self.server.listen_address
        for version, name in remote_versions(self.db):
            assert version.token_hash is not None
            session = self.server.registry.expect_remote(name, version.token_hash, grace=c.grace)
            settings = Settings(
                entries=c.players,
                table_sizes=(c.players,),
                games=c.games or 1,
                seed=c.seed,
                options={"stream": version.id or 0, "endless": c.games == 0},
            )
            self.remotes.append(_Remote(version, name, session, RemoteStream(settings)))
        if not self.remotes:
            raise LobbyError("no remote bots registered; add one with 'arena bots add NAME --remote'")
        versions = [r.version for r in self.remotes] + self.opponents
        t = create_tournament(
            self.db,
            name=f"lobby on {self.address}",
            fmt="lobby",
            versions=versions,
            table_sizes=[c.players],
            games=c.games,
            seed=c.seed,
            control=c.control,
            schedule=[],
            config={
                "listen": self.address,
                "tls": c.tls is not None,
                "opponents": list(c.opponents),
            },
        )
        assert t.id is not None
        self.tournament_id = t.id
        # The lobby coordinates its tournament while the server runs: its lease held, so listings
        # show it running (a running tournament nobody holds is shown interrupted, and 'arena
        # tournament resume' marked it finished under the live lobby) and a resume is refused.
        self._lease = Lease(self.db, t.id)
        self._lease.acquire()
        mark_tournament_running(self.db, t.id)  # it plays while the server runs ("created, not started" said
        # 'start it with arena tournament start', which played nothing and only flipped it)
        self.host.log_dir = arena_home() / "logs" / f"lobby-{t.id}"
        return self.address

    def stop(self) -> None:
        """Stop soon (a stop signal): :meth:`run` starts no more matches, cuts the ones in
        progress short (their bots stopped, each recorded as failed: interrupted) and returns."""
        self._stopping = True

    async def run(self) -> int:
        """Match remote bots while they are online; return the number of matches played."""
        started = time.monotonic()
        try:
            while not self._stopping:
                for r in self.remotes:
                    if r.running is not None and r.running.done():
                        r.running = None
                    idle = r.session.stream_open and r.session.current is None and r.running is None
                    if idle and isinstance(answer := r.next(), Play):
                        r.running = asyncio.create_task(self._play(r, answer.pairings[0]))
                    elif r.running is None and not r.released and isinstance(r.next(), Finished):
                        self._release(r)
                if all(r.running is None and isinstance(r.next(), Finished) for r in self.remotes):
                    break
                if self.config.duration and time.monotonic() - started > self.config.duration:
                    break
                await asyncio.sleep(0.05)
        finally:
            for r in self.remotes:
                if r.running is not None:
                    if self._stopping:
                        r.running.cancel()
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await r.running
            if self.tournament_id:
                with contextlib.suppress(Exception):  # the results are stored; only the status
                    finish_tournament(self.db, self.tournament_id)
            self._release_lease()
        return len(self.results)

    async def _play(self, r: _Remote, pairing: Pairing) -> None:
        """Play the match ``r``'s schedule handed out, and record how it went (stored and in
        ``r.matches``, where the schedule reads it)."""
        c = self.config
        seed = pairing.seed
        index = len(r.matches)
        r.matches.append(Recorded(index, pairing.round, pairing.group, seed, pairing.seating, "running"))
        entries: list[BotVersion] = [r.version, *self.opponents]
        versions = [entries[i] for i in pairing.seating]
        ids = [v.id for v in versions if v.id is not None]
        try:
            match_id = add_match(self.db, self.tournament_id, seed, f"{r.name}:{pairing.group}", ids)
        except BaseException:
            r.matches[index] = replace(r.matches[index], status="failed")
            raise
        seats = [
            r.session if v is r.version else LocalSeat(BotSpec(self._name(v), tuple(command_of(v))))
            for v in versions
        ]
        try:
            names = [s.name if isinstance(s, BotSession) else s.bot.name for s in seats]
            self.log(f"match {match_id}: {' vs '.join(names)} (seed {seed})")
            result = await self.host.play(
                seats, seed, c.control, match_id=f"t{self.tournament_id}-m{match_id}", on_event=self.on_event
            )
        except Exception as exc:  # the arena failed, not a bot: recorded loudly
            r.matches[index] = replace(r.matches[index], status="failed")
            record_failure(self.db, match_id, f"{type(exc).__name__}: {exc}")
            self.log(f"match {match_id} failed: {exc}")
            return
        except asyncio.CancelledError:  # stop(): the lobby is closing
            r.matches[index] = replace(r.matches[index], status="failed")
            self.interrupted += 1
            record_failure(self.db, match_id, "interrupted: the lobby was stopped")
            raise
        r.matches[index] = replace(
            r.matches[index], status="finished", placings=result.placings, scores=result.scores
        )
        record_result(self.db, match_id, result)
        self.results.append(result)
        summary = ", ".join(f"{s.name} {s.score} ({s.termination})" for s in result.seats)
        self.log(f"match {match_id} finished: {summary}")

    def _release(self, r: _Remote) -> None:
        """``r`` has played every game of its schedule: its waiting stream (or its next one) gets a
        Goodbye, so the bot exits instead of waiting for games that will not come (under ``arena
        serve`` the server goes on after the lobby's games, and other remote bots may still play)."""
        r.released = True
        self.server.revoke(r.session)
        played = sum(1 for m in r.matches if m.status == "finished")
        self.log(f"{r.name}: all its lobby games played ({played} finished); told goodbye")

    def _name(self, v: BotVersion) -> str:
        return self.opponent_names.get(v.id or 0, str(v.id))

    def _release_lease(self) -> None:
        if self._lease is not None:
            self._lease.release()  # never raises
            self._lease = None

    async def close(self) -> None:
        """Say goodbye to the remote bots and stop listening."""
        self._release_lease()  # a lobby closed without running
        for r in self.remotes:
            if not r.released:
                self.server.revoke(r.session)
        await asyncio.sleep(0.2)  # let waiting streams receive their goodbye
        await self.host.close(0.5)
        await _unwound_rpcs()


async def _unwound_rpcs(timeout: float = 2.0) -> None:
    """Wait until the streams a stopping gRPC server cancelled have finished unwinding (a stream
    cut short mid-match takes a few loop turns); else ``asyncio.run`` cancels them once more as
    it ends and gRPC prints a traceback for each."""
    names = ("rpc_task", "HandleExceptions[")  # gRPC's names for a stream's tasks
    current = asyncio.current_task()
    rpcs = [t for t in asyncio.all_tasks() if t is not current and t.get_name().startswith(names)]
    if rpcs:
        await asyncio.wait(rpcs, timeout=timeout)
