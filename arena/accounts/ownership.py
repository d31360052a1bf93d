"""Who may act on a bot: its owner, or an admin.  A bot without an owner row (registered with
``arena bots add``) belongs to the admins."""

from __future__ import annotations

from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import Bot, BotVersion
from arena.store.models_accounts import BotOwner, BotUpload, UploadStatus, UserAccount


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
    """The bots ``user_id`` owns (removed ones too), by name in code point order on every backend
    (PostgreSQL's ORDER BY follows the database's collation)."""
    with db.session() as session:
        owned = session.exec(
            select(Bot).join(BotOwner, col(BotOwner.bot_id) == col(Bot.id)).where(BotOwner.user_id == user_id)
        ).all()
        return sorted(owned, key=lambda bot: bot.name)


def play_refusal(db: Database, user: UserAccount | None, version_id: int) -> str | None:
    """Why ``user`` may not play a web game against the stored version ``version_id``, or None.

    An uploaded version that has not passed its validation (pending, validating, rejected) or
    that its owner retired is played only by its owner or an admin: it is not in play, and
    playing it would show how it fails to whoever asks.  Versions without an upload record
    (``arena bots add``, the samples) and active uploads may be played by everyone."""
    with db.session() as session:
        upload = session.exec(select(BotUpload).where(BotUpload.bot_version_id == version_id)).first()
        if upload is None or upload.status == UploadStatus.ACTIVE:
            return None
        version = session.get(BotVersion, version_id)
        bot = session.get(Bot, version.bot_id) if version is not None else None
    if bot is None or version is None or bot.id is None:
        return "that version is not stored"
    if may_manage(user, owner_id(db, bot.id)):
        return None
    return (
        f"{bot.name}@{version.version} is {upload.status}, not in play: only its owner may play it "
        f"(play {bot.name} for its newest version in play)"
    )
