"""Starting a game for a web user (``arena serve``'s "play against this bot").

:func:`bot_starter` makes the ``starter`` of :func:`arena.web.play_routes.play_router`: it reads the
form (``bot``: a registered bot, ``NAME`` or ``NAME@N``, or a sample bot; ``players`` 2-4, the bot
filling every other seat; ``seat``), resolves the bot in the database or among the samples (never
a file path, not even a bare file name of the server's working directory: a web user names bots,
not files), and runs the game as a task of the server's event loop.

Each game is a referee and up to three bot processes, so :class:`GameLimits` bounds them: at most
``per_user`` unfinished games per user, ``per_address`` started from one client address (however
many accounts it has), ``total`` on the server, and ``starts`` game starts per user
in ``window`` seconds; past any of them :func:`bot_starter`'s starter raises
:class:`GameLimitError` (the web answer is 429).  The defaults can be set with the environment
variables ``ARENA_PLAY_USER_GAMES``, ``ARENA_PLAY_ADDRESS_GAMES``, ``ARENA_PLAY_MAX_GAMES`` and
``ARENA_PLAY_STARTS_PER_HOUR``.
A web game's page must be opened within :data:`WEB_OPEN_WAIT` seconds or the seat forfeits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.hosting import BotSpec, sandbox_choice
from arena.referee import TimeControl
from arena.seeds import secret_seed

from .session import DEFAULT_GRACE, DEFAULT_MOVE_TIME, PlayRegistry, PlaySession, PlaySpec

log = logging.getLogger(__name__)

WEB_OPEN_WAIT = 120.0  # seconds a web game waits for its page to be opened
ADDRESS_FIELD = "\x00address"  # the starter's fields: the client's address (set by the route, never a form)


class GameLimitError(Exception):
    """A game refused because of :class:`GameLimits`; the message says which limit and what to do,
    ``retry_after`` when to try again (seconds), ``games`` the pages (``/play/ID``) of the user's
    unfinished games when those are what the limit counted (a web page links them)."""

    def __init__(self, message: str, retry_after: float, games: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.games = games


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


@dataclass
class GameLimits:
    """How many web games may run (see the module docstring); :meth:`admit` checks them."""

    per_user: int = 2
    per_address: int = 4  # games started from one address (however many accounts it signs up)
    total: int = 8
    starts: int = 20
    window: float = 3600.0
    _started: dict[str, deque[float]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls) -> GameLimits:
        """The defaults, or the ``ARENA_PLAY_*`` environment variables' values."""
        return cls(
            per_user=_env_int("ARENA_PLAY_USER_GAMES", cls.per_user),
            per_address=_env_int("ARENA_PLAY_ADDRESS_GAMES", cls.per_address),
            total=_env_int("ARENA_PLAY_MAX_GAMES", cls.total),
            starts=_env_int("ARENA_PLAY_STARTS_PER_HOUR", cls.starts),
        )

    def admit(self, registry: PlayRegistry, user: str, address: str | None = None) -> None:
        """Count a game start for ``user`` (from ``address``), or raise :class:`GameLimitError`
        (nothing counted).  One address runs at most ``per_address`` games, whatever its
        accounts: sign-ups are cheap (an outside review filled every slot of the server with four
        fresh accounts)."""
        if address is not None:
            there = [s for s in registry.unfinished() if s.address == address]
            if len(there) >= self.per_address:
                raise GameLimitError(
                    f"{len(there)} unfinished games were started from your address; at most "
                    f"{self.per_address} may run at once per address: finish or leave one",
                    60.0,
                )
        mine = registry.unfinished(user)
        if len(mine) >= self.per_user:
            pages = tuple(s.path.partition("?")[0] for s in mine)
            raise GameLimitError(
                f"you have {len(mine)} unfinished games ({', '.join(pages)}); at most {self.per_user} may "
                f"run at once per user: finish or leave one (a page left closed forfeits after its grace)",
                60.0,
                pages,
            )
        if len(registry.unfinished()) >= self.total:
            raise GameLimitError(
                f"the server runs its most games at once ({self.total}): try again in a few minutes", 60.0
            )
        now = time.monotonic()
        started = self._started.setdefault(user, deque())
        while started and started[0] <= now - self.window:
            started.popleft()
        if len(started) >= self.starts:
            wait = started[0] + self.window - now
            raise GameLimitError(
                f"you started {len(started)} games in the last {self.window / 60:g} minutes, the most "
                f"allowed: try again in {wait / 60:.0f} minutes",
                wait,
            )
        started.append(now)


def bot_starter(
    db: Any,
    registry: PlayRegistry,
    *,
    name_of: Callable[[Any], str],
    control: TimeControl | None = None,
    grace: float = DEFAULT_GRACE,
    no_sandbox: bool = False,
    log_dir: Path | None = None,
    limits: GameLimits | None = None,
    open_wait: float = WEB_OPEN_WAIT,
    refusal: Callable[[Any, int], str | None] | None = None,
) -> Callable[[Any, dict[str, str]], Awaitable[PlaySession]]:
    """A starter for ``registry`` over ``db`` (see the module docstring); ``name_of(user)`` is the
    person's name in the record (``human:<name>``); ``limits`` default to
    :meth:`GameLimits.from_env`; ``refusal(user, version_id)``, when given, says why that user may
    not play that stored version (``LookupError`` with its words), or None."""
    caps = limits or GameLimits.from_env()

    async def start(user: Any, fields: dict[str, str]) -> PlaySession:
        ref = fields.get("bot", "").strip()
        if not ref or "/" in ref or ref.startswith((".", "~")):
            raise ValueError(f"name a registered bot (NAME or NAME@N) or a sample bot, not {ref!r}")
        try:
            players = int(fields.get("players") or 2)
            seat = int(fields.get("seat") or 0)
        except ValueError:
            raise ValueError("players and seat must be whole numbers") from None
        if not 2 <= players <= 4:
            raise ValueError(f"a game has 2 to 4 players, not {players}")
        bot, version_id = await asyncio.to_thread(_resolve, db, ref)
        if refusal is not None and (why := await asyncio.to_thread(refusal, user, version_id)):
            raise LookupError(why)
        owner = name_of(user)
        spec = PlaySpec(
            tuple(
                BotSpec(bot.name if k == 0 else f"{bot.name}#{k + 1}", bot.command)
                for k in range(players - 1)
            ),
            seat,
            owner,
            control or TimeControl(DEFAULT_MOVE_TIME, 0.0),
            secret_seed(),
            grace=grace,
            open_wait=open_wait,
            sandbox=sandbox_choice(no_sandbox),
        )
        address = fields.get(ADDRESS_FIELD) or None
        session = PlaySession(
            spec,
            db=db,
            version_ids=[version_id] * (players - 1),
            log_dir=log_dir,
            owner=owner,
            address=address,
        )
        caps.admit(registry, owner, address)  # no await between the count and the start: no race
        registry.start(session)
        return session

    return start


def _resolve(db: Any, ref: str) -> tuple[BotSpec, int]:
    """The registered bot (``NAME``, ``NAME@N``) or sample bot ``ref`` names, never a file: unlike
    :func:`arena.botref.resolve`, no path is tried (a bare name like ``tool.py`` would be a file of
    the server's working directory).  Its refusals are for the person on the web page: what is
    wrong with the name, never the server's database URL, file paths or ``arena`` commands they
    cannot run (those go to the server's log)."""
    from arena.botref import ResolvedBot, _registered, removed, sample_bots, stored_version
    from arena.sandbox import BotLaunchError, launch_command
    from arena.store.errors import MissingBotFileError, StoreError

    name = ref.partition("@")[0]
    try:
        bot, _why, _near = _registered(ref, db)
        if bot is None:
            samples = sample_bots()
            if ref not in samples:
                raise LookupError(
                    f"no bot {ref!r} here: not a registered bot and not a sample bot "
                    f"({', '.join(samples) or 'none'}). Name a registered bot (NAME or NAME@N: the "
                    "leaderboard and the bots' pages list them) or a sample bot."
                )
            bot = ResolvedBot(ref, "sample", ref, tuple(launch_command(samples[ref])), path=samples[ref])
        version = stored_version(db, bot)
    except MissingBotFileError as exc:
        log.warning("a web game against %s refused: %s", ref, exc)
        raise LookupError(
            f"{name} cannot play now: its stored file is missing or damaged on this server "
            "(the server's log says more; an admin can register it again)"
        ) from None
    except (BotLaunchError, StoreError) as exc:
        log.info("a web game against %s refused: %s", ref, exc)
        if removed(db, name):
            raise LookupError(f"{name} was removed: it plays no new games") from None
        # what is wrong ("mybot has no version 9") without the advice for the CLI's user ("see
        # 'arena bots show mybot'") or where the database is; an error without that plain part
        # (the database unreachable, a launch that failed) is named but not quoted
        fact = getattr(exc, "fact", None)
        if not isinstance(fact, str) or not fact:
            fact = f"{name} cannot play now on this server (the server's log says why)"
        raise LookupError(fact) from None
    assert version.id is not None
    return BotSpec(bot.name, bot.command), version.id
