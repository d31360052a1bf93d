"""Who may act on a bot: its owner, or an admin.  A bot without an owner row (registered with
``arena bots add``) belongs to the admins."""

from __future__ import annotations

from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import Bot
from arena.store.models_accounts import BotOwner, UserAccount


def owner_id(db: Database, bot_id: int) -> int | None:
    """The id of the bot's owning user, or None."""
    with db.session() as session:
        row = session.get(BotOwner, bot_id)
        return None if row is None else row.user_id


def may_manage(user: UserAccount | None, owner: int | None) -> bool:
    """Whether ``user`` may upload to, retire, delete or download a bot owned by ``owner``."""
    if user is None:
        return False
    return user.is_admin or (owner is not None and owner == user.id)


def owned_bots(db: Database, user_id: int) -> list[Bot]:
    """The bots ``user_id`` owns (removed ones too), by name."""
    with db.session() as session:
        return list(
            session.exec(
                select(Bot)
                .join(BotOwner, col(BotOwner.bot_id) == col(Bot.id))
                .where(BotOwner.user_id == user_id)
                .order_by(Bot.name)
            ).all()
        )
