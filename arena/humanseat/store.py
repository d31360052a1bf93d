"""How a person's seat is recorded: the seat's bot is ``human:<name>``.

A match with a human seat is stored like ``arena match`` stores one (no tournament, not rated),
so it shows in ``arena replays`` and the web app and verifies with ``arena engine verify``.  Every
seat of a match row names a bot version, so a person is recorded as the bot ``human:<name>`` (a
name no registered bot can take: registered names have no ``:``) with one version of kind
``human`` (no file, no command).  Its matches are in the group ``human-play``.
"""

from __future__ import annotations

import hashlib
import re

from sqlmodel import select

from arena.store.botnames import HUMAN_PREFIX
from arena.store.bots import get_or_add_bot
from arena.store.db import Database
from arena.store.models import BotVersion
from arena.store.tournaments import add_match

HUMAN_KIND = "human"
GROUP = "human-play"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,56}\Z")


class HumanNameError(ValueError):
    """A player name that cannot be recorded."""


def human_name(name: str) -> str:
    """``human:<name>``, the seat's bot name; :class:`HumanNameError` for a bad name."""
    if not NAME_RE.match(name):
        raise HumanNameError(
            f"bad player name {name!r}: use 1-57 letters, digits, '_', '.', '@' or '-', "
            "starting with a letter or digit"
        )
    return HUMAN_PREFIX + name


def is_human(bot_name: str) -> bool:
    """Whether a seat's bot name is a person's (``human:<name>``)."""
    return bot_name.startswith(HUMAN_PREFIX)


def human_version(db: Database, name: str) -> int:
    """The id of the bot version a person ``name`` is recorded under (made on first use)."""
    full = human_name(name)
    with db.session() as session:
        bot, _added, _revived = get_or_add_bot(session, full, revive=False)
        assert bot.id is not None
        version = session.exec(select(BotVersion).where(BotVersion.bot_id == bot.id)).first()
        if version is None:
            version = BotVersion(
                bot_id=bot.id,
                version=1,
                sha256=hashlib.sha256(full.encode()).hexdigest(),
                filename="",
                artifact="",
                command="[]",
                kind=HUMAN_KIND,
                persistent=False,
            )
            session.add(version)
            session.flush()
        assert version.id is not None
        return version.id


def start_human_match(db: Database, seed: int, version_ids: list[int]) -> int:
    """Store a new running match with a human seat (``version_ids[k]`` in seat k); its id."""
    return add_match(db, None, seed, GROUP, version_ids)
