"""The bot registry: named bots and their immutable, content-addressed versions."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import secrets
import shutil
import stat
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlmodel import Session, col, func, select

from arena.safetext import printable, small_int
from arena.sandbox import BotLaunchError, launch_command
from arena.tokens import token_hash

from .botnames import DEFAULT_MAX_BOT_MB as DEFAULT_MAX_BOT_MB
from .botnames import FILE_PREFIX as FILE_PREFIX
from .botnames import HUMAN_PREFIX
from .botnames import MAX_BOT_MB_ENV as MAX_BOT_MB_ENV
from .botnames import NAME_RE as NAME_RE
from .db import Database, arena_home
from .errors import BotRegistryError as BotRegistryError
from .errors import DuplicateUploadError as DuplicateUploadError
from .errors import MissingBotFileError as MissingBotFileError
from .errors import UnknownBotError as UnknownBotError
from .models import Bot, BotVersion, MatchSeat, utcnow
from .models_accounts import BotUpload, UploadStatus

PYTHON = "{python}"  # stands for the arena's own interpreter in stored commands
ARTIFACT = "{artifact}"  # stands for the stored copy's path in stored commands
BOT_NAME_LOCK = 0x506F6F6C  # PostgreSQL advisory lock class ("Pool") of a bot name's registration


@dataclass(frozen=True)
class BotInfo:
    """A bot with its latest version and some statistics."""

    bot: Bot
    latest: BotVersion
    versions: int
    matches: int


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


_digests: dict[Path, tuple[int, int, str]] = {}  # path -> (size, mtime_ns, sha256): hashed once


def stored_file_intact(path: Path, digest: str) -> bool:
    """True when ``path`` is a regular file holding the bytes of sha256 ``digest`` (a stored bot
    file that was not damaged).  A file is hashed again only when its size or time changed."""
    try:
        st = path.stat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    known = _digests.get(path)
    if known is not None and known[:2] == (st.st_size, st.st_mtime_ns):
        return known[2] == digest
    try:
        actual = sha256_file(path)
    except OSError:
        return False
    _digests[path] = (st.st_size, st.st_mtime_ns, actual)
    return actual == digest


def stored_command(command: list[str], artifact: Path | None = None) -> str:
    """The command as stored: the arena's interpreter and the artifact's path replaced by
    placeholders, so that the data directory can move (and the arena be reinstalled)."""
    where = str(artifact.resolve()) if artifact is not None else None
    return json.dumps(
        [PYTHON if part == sys.executable else ARTIFACT if part == where else part for part in command]
    )


def artifact_path(version: BotVersion) -> Path:
    """Where ``version``'s stored copy is on this machine.

    Stored paths are relative to the data directory (``artifacts/<sha256>/<filename>``).  Older
    databases hold absolute paths: one that no longer exists (the data directory moved) is
    looked up under the current data directory by its ``artifacts/<sha256>/<filename>`` tail.
    """
    stored = Path(version.artifact)
    if not stored.is_absolute():
        return arena_home().resolve() / stored
    if stored.exists() or len(stored.parts) < 3 or stored.parts[-3] != "artifacts":
        return stored
    return arena_home().resolve() / "artifacts" / stored.parts[-2] / stored.parts[-1]


def check_stored_file(version: BotVersion, name: str, original: Path | None = None) -> None:
    """:class:`MissingBotFileError` when ``version`` (of the bot ``name``) is a local bot whose
    stored file is not there, or does not hold the registered bytes (damaged: its sha256 differs),
    saying how to bring it back; nothing otherwise.  ``original``: a
    file that may hold the same bytes (a sample bot's own file): when it does, the stored file is
    put back from it instead."""
    if version.kind != "local" or not version.artifact:
        return
    path = artifact_path(version)
    bad = not stored_file_intact(path, version.sha256)
    if bad and original is not None and original.is_file() and sha256_file(original) == version.sha256:
        restore_stored_file(version, original)  # a sample bot's own file: put it back
    if stored_file_intact(path, version.sha256):
        return
    if path.exists():
        raise MissingBotFileError(
            f"the stored file of {name} (version {version.version}) is damaged: {path} does not hold "
            f"the registered bytes (sha256 {version.sha256[:12]}...). Register the file again: "
            f"'arena bots add {name} FILE'"
        )
    raise MissingBotFileError(
        f"the stored file of {name} (version {version.version}) is missing: {path} (the data "
        f"folder's artifacts/ was cleaned, or the database was restored without it; 'arena db "
        f"backup' copies the database only). Register the file again: 'arena bots add {name} FILE'"
    )


def command_of(version: BotVersion) -> list[str]:
    """The argv that launches ``version`` on this machine (either stored form: placeholders, or
    the absolute artifact path of older databases)."""
    parts = json.loads(version.command)
    here = str(artifact_path(version)) if version.artifact else ""
    legacy = version.artifact if Path(version.artifact).is_absolute() else None
    return [
        sys.executable if part == PYTHON else here if part in (ARTIFACT, legacy) else part for part in parts
    ]


def max_bot_bytes(max_mb: float | None = None) -> int:
    """The size limit of a bot file: ``max_mb``, else ``$ARENA_MAX_BOT_MB``, else 50 MB."""
    if max_mb is None:
        text = os.environ.get(MAX_BOT_MB_ENV, "")
        try:
            max_mb = float(text) if text else DEFAULT_MAX_BOT_MB
        except ValueError:
            raise BotRegistryError(f"{MAX_BOT_MB_ENV}={text!r} is not a number of megabytes") from None
    if max_mb <= 0:
        raise BotRegistryError(f"the bot size limit must be positive, got {max_mb:g} MB")
    return int(max_mb * 1_000_000)


def check_bot_file(path: Path, max_bytes: int | None = None) -> list[str]:
    """Check that ``path`` can be a bot: an existing, non-empty file of at most ``max_bytes``
    (default :func:`max_bot_bytes`) that the launcher knows how to start; return its argv.

    Raises :class:`BotRegistryError` saying what is wrong and what to do.
    """
    path = Path(path)
    limit = max_bot_bytes() if max_bytes is None else max_bytes
    if path.is_dir():
        raise BotRegistryError(
            f"{path} is a directory, not a file: give the bot's one file (its script or executable; "
            f"bundle a multi-file bot into one file, e.g. a Python zipapp)"
        )
    if path.exists():
        size = path.stat().st_size
        if size == 0:
            raise BotRegistryError(f"{path} is empty: a bot is a script or an executable")
        if size > limit:
            raise BotRegistryError(
                f"{path} is {size / 1e6:.1f} MB, over the {limit / 1e6:g} MB limit for a bot file; "
                f"raise it with --max-size MB or {MAX_BOT_MB_ENV} if that is really the bot"
            )
    try:
        return launch_command(path)
    except BotLaunchError as exc:
        raise BotRegistryError(str(exc)) from None


MAX_STORED_NAME = 200
"""Bytes (UTF-8) of a stored copy's file name: a file system takes 255, the ``filename`` column
255 characters, and an escaped control character takes four."""


def stored_filename(name: str) -> str:
    """``name`` as the stored copy's file name: printable text (a control character escaped, as
    :func:`arena.safetext.printable` does, a tab and a newline too), at most
    :data:`MAX_STORED_NAME` bytes of UTF-8.  A longer one keeps its suffix (``.py``, ``.js``: how
    it is launched) and loses the end of its stem (a 250-character name, legal on disk, ended
    ``bots add`` in "File name too long")."""
    text = printable(name).replace("\t", "\\t").replace("\n", "\\n")  # (printable keeps these two)
    if len(text.encode()) <= MAX_STORED_NAME:
        return text
    stem, dot, suffix = text.rpartition(".")
    if not dot or len(suffix.encode()) > 16:
        stem, suffix = text, ""
    else:
        suffix = dot + suffix
    room = MAX_STORED_NAME - len(suffix.encode())
    return stem.encode()[:room].decode("utf-8", "ignore") + suffix


def _store_artifact(path: Path, digest: str) -> Path:
    """Copy ``path`` into the content-addressed store (once); return the copy's path."""
    store = arena_home() / "artifacts" / digest
    target = store / stored_filename(path.name)  # its name is stored: text, and not too long
    if not stored_file_intact(target, digest):  # missing, or damaged: (re)written
        store.mkdir(parents=True, exist_ok=True)
        tmp = store / f".{uuid.uuid4().hex}.tmp"  # unique: concurrent adds of one file
        shutil.copyfile(path, tmp)
        mode = os.stat(path).st_mode
        os.chmod(tmp, (mode | stat.S_IRUSR) & ~(stat.S_IWGRP | stat.S_IWOTH))
        os.replace(tmp, target)
    return target


def _relative_artifact(digest: str, filename: str) -> str:
    return f"artifacts/{digest}/{filename}"


def _bot(session: Session, name: str, *, include_removed: bool = False) -> Bot:
    bot = session.exec(select(Bot).where(Bot.name == name)).first()
    if bot is None or (bot.removed_at is not None and not include_removed) or is_file_bot(name):
        names = [
            b
            for b in session.exec(select(Bot.name).where(col(Bot.removed_at).is_(None))).all()
            if not is_file_bot(b)
        ]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "see 'arena bots list'"
        raise UnknownBotError(f"no bot named {name!r}", hint, tuple(close))
    return bot


def add_bot(
    db: Database, name: str, path: Path, *, persistent: bool = True, max_bytes: int | None = None
) -> BotVersion:
    """Register ``path`` as the newest version of bot ``name`` (creating the bot if needed).

    The file is copied into the content-addressed artifact store, so later changes to ``path``
    do not change the version; the version stores the copy's path relative to the data
    directory.  Raises :class:`BotRegistryError` for a bad name or file (missing, a directory,
    empty, over ``max_bytes`` (default :func:`max_bot_bytes`), not launchable) and
    :class:`DuplicateUploadError` when the file equals the current version (for a removed bot,
    that file brings the bot back instead).
    """
    if not NAME_RE.match(name):
        raise BotRegistryError(
            f"bad bot name {name!r}: use 1-64 letters, digits, '_', '.' or '-' (first a letter or digit)"
        )
    path = Path(path)
    check_bot_file(path, max_bytes)
    digest = sha256_file(path)
    target = _store_artifact(path, digest)
    command = stored_command(launch_command(target), target)
    with db.session() as session:
        bot, _added, restored = get_or_add_bot(session, name)
        assert bot.id is not None
        latest = _latest_version(session, bot.id)
        if latest is not None and latest.sha256 == digest:
            if restored:  # adding a removed bot's current file brings the bot back (as 'remove' says)
                return latest
            raise DuplicateUploadError(
                f"{path} is identical to {name} version {latest.version} "
                f"(sha256 {digest[:12]}); nothing added"
            )
        return _append_version(session, bot.id, latest, digest, target.name, command, persistent)


def get_or_add_bot(session: Session, name: str, *, revive: bool = True) -> tuple[Bot, bool, bool]:
    """The bot ``name`` in ``session``, added (and flushed, so it has an id) when there is none;
    a removed one is brought back when ``revive``.  Returns ``(bot, added, revived)``.

    Writers of one name take turns: until ``session``'s transaction ends, no other transaction
    gets past this call for ``name``, and what this one reads after it (the newest version, to
    number the next) includes every earlier writer's commit.  SQLite has that from its ``BEGIN
    IMMEDIATE``; on PostgreSQL a transaction-scoped advisory lock on the name gives it (without
    it two processes adding a new name at once both inserted it, or two adding a version both
    numbered theirs N+1, and one ended in an ``IntegrityError`` traceback)."""
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        lock = text("SELECT pg_advisory_xact_lock(:lock, hashtext(:name))")
        conn.execute(lock, {"lock": BOT_NAME_LOCK, "name": name})
    bot = session.exec(select(Bot).where(Bot.name == name)).first()
    if bot is None:
        bot = Bot(name=name)
        session.add(bot)
        session.flush()
        return bot, True, False
    if revive and bot.removed_at is not None:
        bot.removed_at = None
        session.add(bot)
        return bot, False, True
    return bot, False, False


def newest_version(db: Database, name: str) -> BotVersion | None:
    """The newest version of the bot ``name`` (removed or not), or None when there is no such bot."""
    with db.session() as session:
        bot = session.exec(select(Bot).where(Bot.name == name)).first()
        return _latest_version(session, bot.id) if bot is not None and bot.id is not None else None


def _latest_version(session: Session, bot_id: int) -> BotVersion | None:
    """The newest version of the bot ``bot_id``, or None."""
    return session.exec(
        select(BotVersion).where(BotVersion.bot_id == bot_id).order_by(col(BotVersion.version).desc())
    ).first()


def _append_version(
    session: Session,
    bot_id: int,
    latest: BotVersion | None,
    digest: str,
    filename: str,
    command: str,
    persistent: bool,
) -> BotVersion:
    """Add the version after ``latest`` of bot ``bot_id`` (its artifact already stored)."""
    version = BotVersion(
        bot_id=bot_id,
        version=(latest.version + 1) if latest else 1,
        sha256=digest,
        filename=filename,
        artifact=_relative_artifact(digest, filename),
        command=command,
        persistent=persistent,
    )
    session.add(version)
    session.flush()
    session.refresh(version)
    return version


def same_as_current(db: Database, name: str, path: Path) -> BotVersion | None:
    """The latest version of bot ``name`` when ``path`` holds exactly its file (adding it again
    changes nothing, or brings a removed bot back), else None."""
    digest = sha256_file(path)
    with db.session() as session:
        bot = session.exec(select(Bot).where(Bot.name == name)).first()
        if bot is None:
            return None
        latest = _latest_version(session, bot.id) if bot.id is not None else None
        return latest if latest is not None and latest.sha256 == digest else None


def restore_stored_file(version: BotVersion, path: Path) -> bool:
    """Put ``path`` (the same bytes as ``version``, :func:`same_as_current`) back where the
    version's stored file belongs when that file is missing or damaged; True when it was restored."""
    target = artifact_path(version)
    if not version.artifact or stored_file_intact(target, version.sha256):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
    shutil.copyfile(path, tmp)
    os.chmod(tmp, (os.stat(path).st_mode | stat.S_IRUSR) & ~(stat.S_IWGRP | stat.S_IWOTH))
    os.replace(tmp, target)
    return True


def file_version(db: Database, path: Path, *, max_bytes: int | None = None) -> BotVersion:
    """The version under which a bot used by its path (not registered) is recorded.

    Such bots live under the name ``file:<filename>`` (which no registered name can take), one
    version per distinct content, and stay out of ``arena bots list`` and name lookups.  The file
    is stored like a registered bot's, so the record can be replayed and re-run later.
    """
    path = Path(path)
    check_bot_file(path, max_bytes)
    digest = sha256_file(path)
    name = (FILE_PREFIX + printable(path.name))[:64]
    with db.session() as session:
        bot = session.exec(select(Bot).where(Bot.name == name)).first()
        if bot is not None:
            found = session.exec(
                select(BotVersion).where(BotVersion.bot_id == bot.id, BotVersion.sha256 == digest)
            ).first()
            if found is not None:
                return found
    target = _store_artifact(path, digest)
    command = stored_command(launch_command(target), target)
    with db.session() as session:
        bot, _added, _revived = get_or_add_bot(session, name, revive=False)
        assert bot.id is not None
        latest = _latest_version(session, bot.id)
        return _append_version(session, bot.id, latest, digest, target.name, command, True)


def is_file_bot(name: str) -> bool:
    """Whether ``name`` is that of a bot used by path (see :func:`file_version`)."""
    return name.startswith(FILE_PREFIX)


def add_remote_bot(db: Database, name: str) -> tuple[BotVersion, str]:
    """Register a remote bot (it connects in over TCP) and return its new version and its
    long-lived token.  Only the token's sha256 is stored: the token is shown once."""
    if not NAME_RE.match(name):
        raise BotRegistryError(f"bad bot name {name!r}: use 1-64 letters, digits, '_', '.' or '-'")
    token = "rt_" + secrets.token_urlsafe(32)
    hashed = token_hash(token)
    with db.session() as session:
        bot, _added, _revived = get_or_add_bot(session, name)
        assert bot.id is not None
        latest = _latest_version(session, bot.id)
        version = BotVersion(
            bot_id=bot.id,
            version=(latest.version + 1) if latest else 1,
            sha256=hashed,
            filename="(remote)",
            artifact="",
            command="[]",
            kind="remote",
            persistent=True,
            token_hash=hashed,
        )
        session.add(version)
        session.flush()
        session.refresh(version)
        return version, token


def remote_versions(db: Database) -> list[tuple[BotVersion, str]]:
    """The latest version of every active remote bot, with the bot's name."""
    out = []
    for info in list_bots(db):
        if info.latest.kind == "remote":
            out.append((info.latest, info.bot.name))
    return out


def list_bots(db: Database, *, include_removed: bool = False) -> list[BotInfo]:
    """Every bot with its latest version, by name (in code point order, as SQLite's BINARY
    collation and :mod:`.quickread` sort: PostgreSQL's ORDER BY follows the database's collation,
    which put ``alpha B2 beta Zed`` for ``B2 Zed alpha beta`` under an en-US one)."""
    with db.session() as session:
        query = select(Bot).where(col(Bot.name).not_like(f"{FILE_PREFIX}%")).order_by(Bot.name)
        query = query.where(col(Bot.name).not_like(f"{HUMAN_PREFIX}%"))  # people (arena play)
        if not include_removed:
            query = query.where(col(Bot.removed_at).is_(None))
        out = []
        for bot in session.exec(query).all():
            versions = session.exec(
                select(BotVersion).where(BotVersion.bot_id == bot.id).order_by(col(BotVersion.version).desc())
            ).all()
            if not versions:
                continue
            ids = [v.id for v in versions]
            matches = session.exec(
                select(func.count()).select_from(MatchSeat).where(col(MatchSeat.bot_version_id).in_(ids))
            ).one()
            out.append(BotInfo(bot, versions[0], len(versions), int(matches)))
        return sorted(out, key=lambda info: info.bot.name)


def bot_versions(db: Database, name: str) -> tuple[Bot, list[BotVersion]]:
    """A bot (also a removed one) and all its versions, newest first."""
    with db.session() as session:
        bot = _bot(session, name, include_removed=True)
        versions = session.exec(
            select(BotVersion).where(BotVersion.bot_id == bot.id).order_by(col(BotVersion.version).desc())
        ).all()
        return bot, list(versions)


def remove_bot(db: Database, name: str) -> Bot:
    """Hide a bot from listings and new tournaments; its versions and results are kept."""
    with db.session() as session:
        bot = _bot(session, name)
        bot.removed_at = utcnow()
        session.add(bot)
        return bot


# Uploaded versions (``arena serve``) that a bare name never picks: not validated yet, or refused.
_NOT_PLAYABLE = (UploadStatus.PENDING, UploadStatus.VALIDATING, UploadStatus.REJECTED)


def resolve_version(db: Database, ref: str) -> BotVersion:
    """``name@N`` (that version, whatever its state) or ``name``: its newest version that may
    play — a version uploaded on the web that is still pending or validating, or was rejected by
    its validation, is passed over (versions registered with ``arena bots add`` have no upload
    record and always may).  :class:`UnknownBotError` otherwise, saying why."""
    name, _, ver = ref.partition("@")
    with db.session() as session:
        bot = _bot(session, name)
        query = select(BotVersion).where(BotVersion.bot_id == bot.id)
        if ver:
            number = small_int(ver)
            if number is None:
                raise UnknownBotError(f"bad version in {ref!r}: use name@N with a number N")
            query = query.where(BotVersion.version == number)
        else:
            unplayable = select(BotUpload.bot_version_id).where(col(BotUpload.status).in_(_NOT_PLAYABLE))
            query = query.where(col(BotVersion.id).not_in(unplayable))
        version = session.exec(query.order_by(col(BotVersion.version).desc())).first()
        if version is None:
            if not ver:
                raise UnknownBotError(
                    f"{name} has no version that may play yet (every upload is pending, being "
                    f"validated or was rejected)",
                    f"see its page, or 'arena bots show {name}'",
                )
            raise UnknownBotError(f"{name} has no version {ver}", f"see 'arena bots show {name}'")
        return version


def version_names(db: Database, ids: list[int]) -> dict[int, str]:
    """Display names (``name`` or ``name@N`` when several versions exist) by version id."""
    with db.session() as session:
        rows = session.exec(
            select(BotVersion, Bot)
            .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            .where(col(BotVersion.id).in_(ids))
        ).all()
        counts: dict[int, int] = {}
        for v, _b in rows:
            counts[v.bot_id] = counts.get(v.bot_id, 0) + 1
        out = {}
        for v, b in rows:
            assert v.id is not None
            out[v.id] = b.name if counts[v.bot_id] == 1 else f"{b.name}@{v.version}"
        return out
