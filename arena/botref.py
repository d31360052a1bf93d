"""One way to name a bot, everywhere (``arena match``, ``arena evaluate``, tournaments).

A bot reference is, tried in this order:

1. a path to an existing file (or anything with a ``/`` in it: then it must be a file);
2. a registered bot: ``NAME`` (its newest version) or ``NAME@N`` (version N);
3. a sample bot shipped in ``bots/``: ``greedy``, ``greedy-naive``, ``invader``, ``random``, ``search``.

A reference that is none of these is refused with a :class:`BotRefError` listing what was tried.
A registered bot that was removed is refused (not silently replaced by a sample of its name).
Where a match is recorded (``arena match``, tournaments), :func:`stored_version` gives the stored
version a reference plays under.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arena.safetext import printable, shell_word
from arena.sandbox.launcher import BotLaunchError, launch_command

if TYPE_CHECKING:
    from arena.store.db import Database
    from arena.store.models import BotVersion

REPO = Path(__file__).resolve().parent.parent
SAMPLES_DIR = REPO / "bots"
SAMPLE_SUFFIX = "_bot.py"


class BotRefError(BotLaunchError):
    """A bot reference that names no bot; the message says what was tried.  ``fact``, when given,
    is what is wrong in words for anyone, without the database's location or advice for the
    ``arena`` command (a web page shows it alone)."""

    def __init__(self, message: str, *, fact: str | None = None) -> None:
        super().__init__(message)
        self.fact = fact


def sample_bots() -> dict[str, Path]:
    """The sample bots by name: every ``bots/<name>_bot.py`` (an underscore in ``<name>`` reads as a
    hyphen: ``greedy_naive_bot.py`` is ``greedy-naive``)."""
    if not SAMPLES_DIR.is_dir():
        return {}
    return {
        p.name.removesuffix(SAMPLE_SUFFIX).replace("_", "-"): p
        for p in sorted(SAMPLES_DIR.glob(f"*{SAMPLE_SUFFIX}"))
        if p.is_file()
    }


@dataclass(frozen=True)
class ResolvedBot:
    """What a reference names.  ``kind`` is ``path``, ``registered`` or ``sample``; ``path`` is the
    file (for a registered bot, its stored copy); ``version_id`` the registered version."""

    ref: str
    kind: str
    name: str
    command: tuple[str, ...]
    path: Path | None = None
    version_id: int | None = None


def where_is(given: str, path: Path) -> str:
    """`` (ABSOLUTE)`` when ``given`` is not already ``path``'s absolute form, else nothing (an
    absolute path was repeated in brackets)."""
    resolved = path.resolve()
    return "" if str(resolved) == given else f" ({resolved})"


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or os.sep in ref or ref.startswith(".") or ref.startswith("~")


def resolve(ref: str, db: Database | None = None, *, no_db: str = "") -> ResolvedBot:
    """Resolve ``ref`` (see the module docstring).  Without ``db`` registered names are not
    looked up (and the error says so, or says ``no_db``: why there is none).  Raises
    :class:`BotRefError`, or :class:`arena.store.bots.UnknownBotError` for a removed bot."""
    path = Path(ref).expanduser()
    if path.exists() or _looks_like_path(ref):
        if not path.exists():
            raise BotRefError(
                f"{ref}: no such file{where_is(ref, path)}; a name with '/' is read as a path. "
                f"Give the path of the bot's script or executable."
            )
        try:
            command = launch_command(path)
        except BotLaunchError as exc:
            raise BotRefError(str(exc)) from None
        # a file name need not be text (bytes that are not UTF-8 arrive as lone surrogates, which
        # neither the database nor the bots' protocol can carry): its name as printable text
        return ResolvedBot(ref, "path", printable(path.stem or path.name), tuple(command), path=path)
    tried = [f"not a file: no {path.resolve()}"]
    near: tuple[str, ...] = ()  # registered names like ``ref``
    if db is not None:
        registered, why, near = _registered(ref, db)
        if registered is not None:
            return registered
        tried.append(why)
    else:
        tried.append(no_db or "registered bots were not looked up here")
    samples = sample_bots()
    if ref in samples:
        return ResolvedBot(ref, "sample", ref, tuple(launch_command(samples[ref])), path=samples[ref])
    tried.append(f"not a sample bot ({', '.join(samples) or 'none found in ' + str(SAMPLES_DIR)})")
    hyphen = ref.replace("_", "-")  # the sample files' names have underscores, the bots hyphens
    if hyphen in samples:
        close = [hyphen]
    else:  # one hint for both kinds of name, the registered ones first
        close = [*near, *(c for c in difflib.get_close_matches(ref, list(samples), n=2) if c not in near)][:3]
    hint = f". Did you mean {' or '.join(close)}?" if close else ""
    raise BotRefError(f"no bot {ref!r}: " + "; ".join(tried) + hint)


def _registered(ref: str, db: Database) -> tuple[ResolvedBot | None, str, tuple[str, ...]]:
    """The registered bot ``ref`` names, or (None, why not, the registered names like it): the why
    without a did-you-mean, which the caller gives once for every kind of name."""
    from arena.store.bots import (
        NAME_RE,
        UnknownBotError,
        artifact_path,
        check_stored_file,
        command_of,
        resolve_version,
    )

    name, at, _ = ref.partition("@")
    where = f"in the database {_shown(db)}"
    if not NAME_RE.match(name):
        return None, f"not a registered bot name {where}", ()
    try:
        version = resolve_version(db, ref)
    except UnknownBotError as exc:
        if at:  # name@N asks for a registered version and nothing else
            raise BotRefError(f"{exc} ({where})", fact=exc.fact) from None
        if removed(db, name):  # removed from new matches: not silently replaced by a sample
            raise UnknownBotError(
                f"{exc} ({where}: {name} was removed; {comeback(db, name)} brings it back)"
            ) from None
        # its did-you-mean goes into the caller's one hint; other advice stays where it is
        return None, f"not a registered bot {where} ({exc.fact if exc.close else exc})", exc.close
    if version.kind != "local":
        raise BotRefError(
            f"{ref} is a remote bot: it connects in by itself ('arena serve'), it cannot be launched here",
            fact=f"{ref} is a remote bot: it connects in by itself, it cannot be launched here",
        )
    check_stored_file(version, name, sample_bots().get(name))  # gone: an error, not a crash a game
    display = ref if at else name
    return (
        ResolvedBot(
            ref, "registered", display, tuple(command_of(version)), artifact_path(version), version.id
        ),
        "",
        (),
    )


def _shown(db: Database) -> str:
    with contextlib.suppress(Exception):
        from sqlalchemy.engine import make_url

        return make_url(db.url).render_as_string(hide_password=True)
    return "(unknown)"


def stored_version(db: Database, bot: ResolvedBot) -> BotVersion:
    """The version under which ``bot`` is recorded in the store (for match records and
    tournaments).  A registered bot is its version; a sample bot is the version of the registered
    bot of its name that holds the sample's file (see :func:`sample_version`), or ``file:<filename>``
    when another file holds that name; a file used by path is recorded as ``file:<filename>`` (see
    :func:`arena.store.bots.file_version`)."""
    from arena.store.bots import file_version
    from arena.store.models import BotVersion

    if bot.kind == "registered":
        assert bot.version_id is not None
        with db.session() as session:
            version = session.get(BotVersion, bot.version_id)
            assert version is not None
            return version
    assert bot.path is not None
    if bot.kind == "sample":
        sample = sample_version(db, bot.name, bot.path)
        if sample is not None:
            return sample
    return file_version(db, bot.path)


def sample_version(db: Database, name: str, path: Path) -> BotVersion | None:
    """The stored version of the sample bot ``name`` (file ``path``), registered under its own
    name the first time it is needed (as ``arena demo`` does), so every use of the sample is
    recorded under one bot.  A sample's name takes only the sample's file (``arena bots add``
    and uploads refuse others), so the bot of that name is the sample: its version holding the
    file's current content, else that content added as its newest version (the sample file
    changed since; a removed bot keeps its sample version but is not brought back).  None when
    the name holds another file (registered before names were reserved), or was removed with no
    version of the current file: the caller records the sample as ``file:<filename>`` then."""
    from sqlalchemy.exc import IntegrityError
    from sqlmodel import col, select

    from arena.store.bots import add_bot, sha256_file
    from arena.store.errors import DuplicateUploadError
    from arena.store.models import Bot, BotVersion

    digest = sha256_file(path)
    for attempt in range(2):
        with db.session() as session:
            owner = session.exec(select(Bot).where(Bot.name == name)).first()
            if owner is not None:
                same = session.exec(
                    select(BotVersion)
                    .where(BotVersion.bot_id == owner.id, BotVersion.sha256 == digest)
                    .order_by(col(BotVersion.version).desc())
                ).first()
                if same is not None:
                    return same
                latest = session.exec(
                    select(BotVersion)
                    .where(BotVersion.bot_id == owner.id)
                    .order_by(col(BotVersion.version).desc())
                ).first()
                if owner.removed_at is not None or (latest is not None and latest.filename != path.name):
                    return None
        try:
            return add_bot(db, name, path)
        except (IntegrityError, DuplicateUploadError):  # another process registered it meanwhile
            if attempt:
                raise
    raise AssertionError("unreachable")


def resolve_for_reading(refs: list[str]) -> list[ResolvedBot]:
    """Resolve ``refs`` for a command that only reads the store (``arena evaluate``): the
    database is opened read-only, and only when some reference is not a path; a missing
    database means no registered bots (the error then says so).  Raises :class:`BotRefError`
    (and :class:`arena.store.db.StoreError` for a database that cannot be read)."""
    if all(Path(r).expanduser().exists() or _looks_like_path(r) for r in refs):
        return [resolve(r) for r in refs]
    from arena.store.db import Database, NoDatabaseError

    no_db = ""
    try:
        db: Database | None = Database(readonly=True)
    except NoDatabaseError as exc:
        db, no_db = None, f"not a registered bot ({exc})"
    try:
        return [resolve(r, db, no_db=no_db) for r in refs]
    finally:
        if db is not None:
            db.close()


def comeback(db: Database, name: str) -> str:
    """The command that brings the removed bot ``name`` back: ``'arena bots add NAME FILE'`` with
    its last version's file (its copy in the artifact store) or, for a sample name without one, the
    sample's file; ``PATH`` when there is neither."""
    from arena.store.bots import UnknownBotError, artifact_path, bot_versions

    path: Path | None = None
    try:
        _, versions = bot_versions(db, name)
    except UnknownBotError:  # never registered: a sample name, or nothing to point at
        versions = []
    last = next((v for v in versions if v.kind == "local" and v.artifact), None)
    if last is not None and artifact_path(last).is_file():
        path = artifact_path(last)
    if path is None:
        path = sample_bots().get(name)
    shown = "PATH" if path is None else shell_word(_relative(path))
    return f"'arena bots add {name} {shown}'"


def _relative(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def removed(db: Database, name: str) -> bool:
    """Whether ``name`` is a registered bot that was removed."""
    from sqlmodel import col, select

    from arena.store.models import Bot

    with db.session() as session:
        found = session.exec(select(Bot.id).where(Bot.name == name, col(Bot.removed_at).is_not(None)))
        return found.first() is not None
