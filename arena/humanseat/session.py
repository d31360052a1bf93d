"""One match with a person in one seat: a match host with the bots, the bridge, the record.

:class:`PlaySession` starts a :class:`~arena.hosting.MatchHost` (a referee and the bot processes,
exactly as ``arena match``), mints the person's seat a session token like any bot's, connects a
:class:`~arena.humanseat.bridge.HumanBridge` with it, plays the match and stores it (the seat's
bot is ``human:<name>``, see :mod:`arena.humanseat.store`).  :class:`PlayRegistry` holds the
sessions a web server serves pages for (``arena play`` has one, ``arena serve`` one per game).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.engine import replay
from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules
from arena.hosting import BotSpec, LocalSeat, MatchHost
from arena.referee import BotSession, MatchResult, TimeControl
from arena.referee.crashinfo import public_detail, public_forfeit
from arena.sandbox.limits import SandboxLimits

from .bridge import HumanBridge
from .store import human_name

log = logging.getLogger(__name__)

DEFAULT_MOVE_TIME = 60.0  # seconds per decision: a person's pace
DEFAULT_GRACE = 30.0  # seconds a closed page may take to come back
DEFAULT_OPEN_WAIT = 300.0  # seconds the page may take to be opened at all


@dataclass(frozen=True)
class PlaySpec:
    """What to play: ``bots`` fill the seats other than ``seat`` (in seat order), the person
    ``player`` plays ``seat``; the time control, the seed, the rules; the person's ``grace``."""

    bots: tuple[BotSpec, ...]
    seat: int
    player: str
    control: TimeControl
    seed: int
    rules: Rules = DEFAULT_RULES
    grace: float = DEFAULT_GRACE
    open_wait: float = DEFAULT_OPEN_WAIT
    sandbox: SandboxLimits | None = None

    @property
    def players(self) -> int:
        """Seats in the match."""
        return len(self.bots) + 1

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 4:
            raise ValueError(f"a match needs 2 to 4 players: {len(self.bots)} bots and one person")
        if not 0 <= self.seat < self.players:
            raise ValueError(
                f"seat {self.seat} does not exist in a {self.players}-player match (0-{self.players - 1})"
            )
        human_name(self.player)  # HumanNameError for a bad name

    def seating(self) -> list[str]:
        """The seat names, the person's as ``human:<name>``."""
        names = [b.name for b in self.bots]
        names.insert(self.seat, human_name(self.player))
        return names


@dataclass
class PlaySession:
    """One match with a person (see the module docstring).  ``version_ids``: the stored bot
    versions of ``spec.bots`` (None: the match is not stored); ``owner``: the web user, if any;
    ``address``: the address the game was started from (web games)."""

    spec: PlaySpec
    db: Any = None  # arena.store.db.Database, or None: not stored
    version_ids: Sequence[int] | None = None
    log_dir: Path | None = None
    owner: str | None = None
    address: str | None = None  # the client address that started it (web games)
    id: str = field(default_factory=lambda: secrets.token_urlsafe(9))
    key: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    bridge: HumanBridge | None = None
    result: MatchResult | None = None
    stored: int | None = None
    error: str = ""
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # the bridge exists
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def path(self) -> str:
        """The page's path with the seat's key (the link to give the person)."""
        return f"/play/{self.id}?key={self.key}"

    async def run(self) -> MatchResult | None:
        """Play the match to its end and store it; the result (None when it could not start:
        :attr:`error` says why)."""
        spec = self.spec
        host = MatchHost(sandbox=spec.sandbox, log_dir=self.log_dir, label="play")
        bridge_task: asyncio.Task[None] | None = None
        try:
            await host.start()
            person: BotSession = host.server.session(human_name(spec.player))
            bridge = HumanBridge(
                host.address,
                person.token,
                name=spec.player,
                key=self.key,
                grace=spec.grace,
                open_wait=spec.open_wait,
                on_leave=lambda why: setattr(person, "departed", why),  # the forfeit says why
            )
            self.bridge = bridge
            self.ready.set()
            bridge_task = asyncio.create_task(bridge.run())
            seats: list[LocalSeat | BotSession] = [LocalSeat(b) for b in spec.bots]
            seats.insert(spec.seat, person)
            match_id = await self._start_record()
            live = None
            if self.db is not None and self.stored is not None:  # any web process of the database follows it
                from arena.live.publish import observer_of_database

                live = observer_of_database(self.db.url, self.stored)
            result = await host.play(
                seats, spec.seed, spec.control, match_id=match_id, rules=spec.rules, on_event=live
            )
            self.result = result
            await self._record(result)
            self._finish(bridge, result)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(bridge_task), 5.0)
            return result
        except Exception as exc:
            self.error = str(exc) or type(exc).__name__
            log.warning("a play session failed: %s", self.error)
            if self.stored is not None and self.db is not None:
                from arena.store.tournaments import record_failure

                await asyncio.to_thread(record_failure, self.db, self.stored, self.error)
            if self.bridge is not None:
                self.bridge.error = self.error
                self.bridge.ended.set()
            return None
        finally:
            self.ready.set()
            if bridge_task is not None and not bridge_task.done():
                bridge_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await bridge_task
            await host.close()
            self.done.set()
            if self.bridge is not None:
                self.bridge._bump()

    async def _start_record(self) -> str:
        if self.db is None or self.version_ids is None:
            return f"p{secrets.token_hex(4)}"
        from .store import human_version, start_human_match

        db, spec = self.db, self.spec

        def start() -> int:
            ids = list(self.version_ids or [])
            ids.insert(spec.seat, human_version(db, spec.player))
            return start_human_match(db, spec.seed, ids)

        self.stored = await asyncio.to_thread(start)
        return f"m{self.stored}"

    async def _record(self, result: MatchResult) -> None:
        if self.db is None or self.stored is None:
            return
        from arena.store.tournaments import record_result

        await asyncio.to_thread(record_result, self.db, self.stored, result)

    def _finish(self, bridge: HumanBridge, result: MatchResult) -> None:
        """Give the page the end of the game (the events after its last request come from the
        record) and the stored match."""
        timeline = bridge.timeline
        rep = replay(result.replay)
        if timeline is not None:
            for k in range(len(timeline.events), len(rep.events)):
                timeline.events.append(dict(rep.events[k]))
                timeline.states.append(rep.states[k + 1])
        bridge.final = {
            "stored": self.stored,
            "replay_url": None if self.stored is None else f"/matches/{self.stored}",
            "termination": str(result.termination),
            # the person at the page is not a bot's owner: crashes without their stderr
            "forfeits": [public_forfeit(f) for f in rep.result.get("forfeits", [])],
            "seats": [
                {
                    "seat": s.seat,
                    "name": s.name,
                    "score": s.score,
                    "placing": s.placing,
                    "termination": str(s.termination),
                    "detail": public_detail(str(s.termination), s.detail) or "",
                }
                for s in result.seats
            ],
        }
        bridge._bump()


class PlayRegistry:
    """The play sessions a web server serves pages for, by id (the newest ``keep`` are kept)."""

    def __init__(self, keep: int = 200) -> None:
        self.keep = keep
        self.sessions: dict[str, PlaySession] = {}
        self.tasks: dict[str, asyncio.Task[MatchResult | None]] = {}

    def add(self, session: PlaySession) -> PlaySession:
        """Register ``session`` (its page is served from now on)."""
        self.sessions[session.id] = session
        while len(self.sessions) > self.keep:
            oldest = next(iter(self.sessions))
            if not self.sessions[oldest].done.is_set():
                break
            del self.sessions[oldest]
            self.tasks.pop(oldest, None)
        return session

    def start(self, session: PlaySession) -> asyncio.Task[MatchResult | None]:
        """Register ``session`` and run it as a task of the running event loop."""
        self.add(session)
        task = asyncio.create_task(session.run())
        self.tasks[session.id] = task
        return task

    def get(self, session_id: str) -> PlaySession | None:
        """The session ``session_id``, or None."""
        return self.sessions.get(session_id)

    def unfinished(self, owner: str | None = None) -> list[PlaySession]:
        """The sessions still running (of ``owner`` only, when given), oldest first."""
        return [
            s for s in self.sessions.values() if not s.done.is_set() and (owner is None or s.owner == owner)
        ]
