"""Uploads: each is a new immutable version of a bot the uploader owns, with its validation row.

:func:`submit_version` checks everything first (:mod:`arena.submission.files`, the bot's owner,
a duplicate of the current version) and writes nothing for a refused upload.  An accepted one
stores its file in the content-addressed artifact store and then, in one transaction, the bot
(when new), its owner, the version and a ``pending`` :class:`BotUpload`: the server's validation
service plays it next (:mod:`arena.submission.validation`).  A transaction that fails removes the
file it had just stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, func, select

from arena.botref import sample_bots
from arena.sandbox import BotLaunchError, launch_command
from arena.store.bots import (
    _append_version,
    _latest_version,
    _store_artifact,
    get_or_add_bot,
    is_file_bot,
    stored_command,
)
from arena.store.db import Database, arena_home
from arena.store.models import Bot, BotVersion, utcnow
from arena.store.models_accounts import BotOwner, BotUpload, UploadStatus, UserAccount

from .files import UploadError, check_bot_name, check_content, check_filename


class NotYoursError(UploadError):
    """The bot belongs to somebody else (403)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 403)


@dataclass(frozen=True)
class Submitted:
    """An accepted upload: the bot's name, the new version and its upload row."""

    bot: str
    version: BotVersion
    upload: BotUpload


def reserved_names() -> set[str]:
    """Names no upload may take: the sample bots (validation opponents among them)."""
    return set(sample_bots())


def submit_version(
    db: Database,
    user: UserAccount,
    name: str,
    filename: str,
    data: bytes,
    *,
    keep_previous: bool = False,
    limit: int | None = None,
) -> Submitted:
    """Store ``data`` as the next version of ``user``'s bot ``name`` (see the module docstring).

    Raises :class:`UploadError` (with its HTTP status): a bad name or file, a bot of another user
    (:class:`NotYoursError`, 403; a bot registered from the CLI belongs to the admins), the same
    file as the current version (409).
    """
    assert user.id is not None
    check_bot_name(name)
    filename = check_filename(filename)
    executable = check_content(filename, data, limit)
    if _skeleton(name) in {_skeleton(n) for n in reserved_names()} or is_file_bot(name):
        raise UploadError(f"the name {name!r} is reserved for a sample bot: choose another", 403)
    look_alike = _same_but_case(db, name)
    if look_alike is not None:  # 'Greedy' beside 'greedy', 'Abot' beside 'abot': one could pass for the other
        raise UploadError(
            f"the name {name!r} differs only in case from the bot {look_alike!r}: choose another", 409
        )
    digest = hashlib.sha256(data).hexdigest()
    _check_owner(db, user, name, digest)
    target, fresh = _store_bytes(filename, data, digest, executable)
    try:
        command = stored_command(launch_command(target), target)
    except BotLaunchError as exc:
        _forget(target, fresh)
        # named by its file name: the stored path would show the uploader the server's data folder
        raise UploadError(f"{filename}: {str(exc).removeprefix(f'{target}: ')}", 415) from None
    try:
        return _record(db, user, name, filename, digest, command, keep_previous)
    except BaseException:
        _forget(target, fresh)
        raise


def _skeleton(name: str) -> str:
    """What a name looks like to a reader: lower case, without a file suffix (``.py``, ``_bot``)
    and without punctuation, so that ``Greedy``, ``greedy_naive``, ``random.``, ``search.py`` and
    ``invader_bot`` all read as a sample's name (an outside review uploaded all of them)."""
    folded = name.casefold()
    for suffix in (".py", ".js", ".sh", "_bot", "-bot", ".bot"):
        folded = folded.removesuffix(suffix)
    return re.sub(r"[^0-9a-z]", "", folded)


def _same_but_case(db: Database, name: str) -> str | None:
    """The name of a stored bot that differs from ``name`` only in case, or None."""
    with db.session() as session:
        names = session.exec(select(Bot.name).where(func.lower(Bot.name) == name.lower())).all()
    return next((n for n in names if n != name), None)


def _check_owner(db: Database, user: UserAccount, name: str, digest: str) -> None:
    with db.session() as session:
        bot = session.exec(select(Bot).where(Bot.name == name)).first()
        if bot is None or bot.id is None:
            return
        owner = session.get(BotOwner, bot.id)
        if not (user.is_admin or (owner is not None and owner.user_id == user.id)):
            raise NotYoursError(f"the bot {name!r} belongs to another user: choose another name")
        latest = _latest_version(session, bot.id)
        if latest is not None and latest.sha256 == digest and bot.removed_at is None:
            raise UploadError(
                f"this file is identical to {name} version {latest.version} (sha256 {digest[:12]}); "
                f"nothing added",
                409,
            )


def _store_bytes(filename: str, data: bytes, digest: str, executable: bool) -> tuple[Path, bool]:
    """Put the bytes into the artifact store; returns the stored path and whether it is new."""
    exists = (arena_home() / "artifacts" / digest / filename).exists()
    folder = Path(tempfile.mkdtemp(prefix="arena-upload-"))
    try:
        tmp = folder / filename
        tmp.write_bytes(data)
        os.chmod(tmp, 0o755 if executable else 0o644)
        target = _store_artifact(tmp, digest)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if executable:
        os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR)
    return target, not exists


def _forget(target: Path, fresh: bool) -> None:
    """Remove a just-stored artifact whose upload was not recorded (nothing left behind)."""
    if not fresh:
        return
    target.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        target.parent.rmdir()


def _record(
    db: Database, user: UserAccount, name: str, filename: str, digest: str, command: str, keep: bool
) -> Submitted:
    assert user.id is not None
    try:
        with db.session() as session:
            bot, added, _revived = get_or_add_bot(session, name)
            assert bot.id is not None
            if added:
                session.add(BotOwner(bot_id=bot.id, user_id=user.id))
            version = _append_version(
                session, bot.id, _latest_version(session, bot.id), digest, filename, command, True
            )
            assert version.id is not None
            upload = BotUpload(bot_version_id=version.id, user_id=user.id, keep_previous=keep)
            session.add(upload)
            session.flush()
            session.refresh(upload)
            session.expunge(upload)
            session.expunge(version)
            return Submitted(name, version, upload)
    except IntegrityError:
        raise UploadError(
            f"the bot {name!r} was changed by another upload at the same moment: try again", 409
        ) from None


# ---------------------------------------------------------------------------- owner's actions


def set_status(db: Database, version_id: int, status: str, reason: str | None = None) -> BotUpload:
    """Set an upload's status (``retired`` by its owner, ...); a CLI-registered version without
    an upload row gets one (owned by nobody: user 0 is never a user, so the row says 'admin')."""
    if status not in UploadStatus.ALL:
        raise ValueError(f"unknown upload status {status!r}")
    with db.session() as session:
        row = session.exec(select(BotUpload).where(BotUpload.bot_version_id == version_id)).first()
        if row is None:
            raise UploadError(
                f"version {version_id} was not uploaded on the web: retire it with the CLI", 400
            )
        row.status = status
        row.reason = reason if reason is not None else row.reason
        row.finished_at = row.finished_at or utcnow()
        session.add(row)
        session.flush()
        session.refresh(row)
        session.expunge(row)
        return row


def delete_bot(db: Database, bot_id: int) -> None:
    """Remove a bot from listings and new matches (its history, versions and files stay: past
    matches and replays keep their meaning); its active versions retire."""
    with db.session() as session:
        bot = session.get(Bot, bot_id)
        if bot is None:
            return
        bot.removed_at = utcnow()
        session.add(bot)
        ids = [v.id for v in session.exec(select(BotVersion).where(BotVersion.bot_id == bot_id)).all()]
        for row in session.exec(select(BotUpload).where(col(BotUpload.bot_version_id).in_(ids))).all():
            if row.status in (UploadStatus.ACTIVE, UploadStatus.PENDING, UploadStatus.VALIDATING):
                row.status = UploadStatus.RETIRED
                row.reason = "the bot was deleted by its owner"
                session.add(row)


def uploads_of(db: Database, version_ids: list[int]) -> dict[int, BotUpload]:
    """The upload rows of these versions, by version id (CLI versions have none)."""
    with db.session() as session:
        rows = session.exec(select(BotUpload).where(col(BotUpload.bot_version_id).in_(version_ids))).all()
        for r in rows:
            session.expunge(r)
        return {r.bot_version_id: r for r in rows}


def match_ids(upload: BotUpload) -> list[int]:
    """The validation matches of an upload."""
    try:
        ids = json.loads(upload.match_ids or "[]")
    except ValueError:
        return []
    return [int(i) for i in ids if isinstance(i, int)]


def active_version_ids(db: Database) -> list[int]:
    """The uploaded versions that may play now (validated, not retired, their bot not deleted),
    oldest first: what a continuous ladder should field.  Versions registered from the CLI have
    no upload row and are not included."""
    with db.session() as session:
        rows = session.exec(
            select(BotUpload.bot_version_id)
            .join(BotVersion, col(BotVersion.id) == col(BotUpload.bot_version_id))
            .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            .where(BotUpload.status == UploadStatus.ACTIVE, col(Bot.removed_at).is_(None))
            .order_by(col(BotUpload.bot_version_id))
        ).all()
        return list(rows)
