"""Starting a game for a web user (``arena serve``'s "play against this bot").

:func:`bot_starter` makes the ``starter`` of :func:`arena.web.play_routes.play_router`: it reads the
form (``bot``: a registered bot, ``NAME`` or ``NAME@N``, or a sample bot; ``players`` 2-4, the bot
filling every other seat; ``seat``), resolves the bot in the database (never a file path: a web
user names bots, not files), and runs the game as a task of the server's event loop.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from arena.engine.chance import SEED_LIMIT
from arena.hosting import BotSpec, sandbox_choice
from arena.referee import TimeControl

from .session import DEFAULT_GRACE, DEFAULT_MOVE_TIME, PlayRegistry, PlaySession, PlaySpec


def bot_starter(
    db: Any,
    registry: PlayRegistry,
    *,
    name_of: Callable[[Any], str],
    control: TimeControl | None = None,
    grace: float = DEFAULT_GRACE,
    no_sandbox: bool = False,
    log_dir: Path | None = None,
) -> Callable[[Any, dict[str, str]], Awaitable[PlaySession]]:
    """A starter for ``registry`` over ``db`` (see the module docstring); ``name_of(user)`` is the
    person's name in the record (``human:<name>``)."""

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
        spec = PlaySpec(
            tuple(
                BotSpec(bot.name if k == 0 else f"{bot.name}#{k + 1}", bot.command)
                for k in range(players - 1)
            ),
            seat,
            name_of(user),
            control or TimeControl(DEFAULT_MOVE_TIME, 0.0),
            random.randrange(SEED_LIMIT),
            grace=grace,
            sandbox=sandbox_choice(no_sandbox),
        )
        session = PlaySession(
            spec, db=db, version_ids=[version_id] * (players - 1), log_dir=log_dir, owner=name_of(user)
        )
        registry.start(session)
        return session

    return start


def _resolve(db: Any, ref: str) -> tuple[BotSpec, int]:
    from arena.botref import resolve, stored_version
    from arena.sandbox import BotLaunchError
    from arena.store.errors import StoreError

    try:
        bot = resolve(ref, db)
        version = stored_version(db, bot)
    except (BotLaunchError, StoreError) as exc:
        raise LookupError(str(exc)) from None
    assert version.id is not None
    return BotSpec(bot.name, bot.command), version.id
