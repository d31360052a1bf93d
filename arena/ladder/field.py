"""Who is on the ladder: the ladder tournament, its active bot versions, and its growing field.

The ladder is one stored tournament of format ``ladder`` (named :data:`LADDER_NAME`; the newest
one of that name is *the* ladder).  Its field only grows: each time the format is asked, every
*active* bot version not yet in it is appended as an entry (:func:`sync_field`); a version that
stops being active stays in the field (its history is kept) but is no longer seated.

A version is **active** when its bot is registered and not removed (not a ``file:`` bot, not a
remote bot) and

- it was uploaded on the web (a ``bot_upload`` row) and its upload's status is ``active``
  (validated and not retired), or
- it was registered from the command line (no upload row) and is its bot's newest version,

and its stored file is there (:func:`arena.store.bots.check_stored_file`; a sample bot's file is
put back from the sample itself): a version whose file is gone is not seated, so it cannot crash
every game it would be given, and this is logged once per process with how to bring it back.

**Stored and per-run settings.** The ladder's seed, table sizes, time control and sandbox are
stored when it is created and kept for good (:func:`ensure_ladder`; :func:`stored_differences`
says where a run asked for something else; a new ladder, ``new=True``, is the way to change
them).  How far one run goes (``max_tables``) and how many groups it keeps unfinished
(``inflight``) belong to the run (:data:`RUN_OPTIONS`): they are never stored.  A ladder stored by
an earlier version with a ``max_tables`` option (which ended it for every later run) has that
option removed, and is no longer ``finished``, when it is next run.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from sqlalchemy import func
from sqlmodel import col, select

from arena.botref import sample_bots
from arena.referee.timecontrol import TimeControl
from arena.sandbox.limits import SandboxLimits
from arena.seeds import secret_seed
from arena.store.bots import FILE_PREFIX, MissingBotFileError, check_stored_file
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Tournament, TournamentEntry, utcnow
from arena.store.models_accounts import BotUpload, UploadStatus
from arena.store.tournaments import create_tournament, time_control_of

LADDER_NAME = "ladder"
DEFAULT_TABLES = (2, 3, 4)
MAX_TABLE_CYCLE = 8
"""The most table sizes a ladder's cycle holds: stored as "2,3,4,..." in the tournament's
16-character ``table_sizes`` column (PostgreSQL refuses longer text; SQLite kept it)."""
RUN_OPTIONS = ("max_tables", "inflight")
"""Format options that belong to one run of the ladder, never to the stored ladder."""

log = logging.getLogger(__name__)
_told_missing: set[int] = set()  # versions whose missing file was logged (once per process)


def active_versions(db: Database) -> list[int]:
    """The active bot version ids (see the module docstring), ascending."""
    with db.session() as session:
        rows = session.exec(
            select(BotVersion, Bot.name)
            .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            .where(col(Bot.removed_at).is_(None), BotVersion.kind == "local")
        ).all()
        uploads = {
            vid: status
            for vid, status in session.exec(select(BotUpload.bot_version_id, BotUpload.status)).all()
        }
    newest: dict[int, int] = {}
    for v, _name in rows:
        newest[v.bot_id] = max(newest.get(v.bot_id, 0), v.version)
    out = []
    samples = sample_bots()
    for v, name in rows:
        if v.id is None or name.startswith(FILE_PREFIX):
            continue
        status = uploads.get(v.id)
        chosen = status == UploadStatus.ACTIVE or (status is None and v.version == newest[v.bot_id])
        if chosen and has_stored_file(v, name, samples.get(name)):
            out.append(v.id)
    return sorted(out)


def has_stored_file(version: BotVersion, name: str, original: Path | None) -> bool:
    """True when ``version``'s stored file is there (or was put back from ``original``); else
    False, logged once per process with what to do."""
    vid = version.id or 0
    try:
        check_stored_file(version, name, original)
    except MissingBotFileError as exc:
        if vid not in _told_missing:
            _told_missing.add(vid)
            log.warning("ladder: %s v%s is not seated: %s", name, version.version, exc)
        return False
    _told_missing.discard(vid)
    return True


def find_ladder(db: Database) -> Tournament | None:
    """The ladder tournament, if there is one."""
    with db.session() as session:
        return session.exec(
            select(Tournament)
            .where(Tournament.format == "ladder", Tournament.name == LADDER_NAME)
            .order_by(col(Tournament.id).desc())
        ).first()


GUESSABLE_SEED = 2**40
"""A ladder seed below this could be found by a bot (every match seed follows from it, and a
bot can check a guess against the dice it sees); a random 63-bit seed is not."""


GUESSABLE_WARNING = (
    "the ladder (tournament {id}) has a seed small enough for a bot to find by trying (below "
    "2**40, as 1, the default of earlier versions, is), and with it every throw to come; "
    "'arena ladder run --new' "
    "starts a new ladder with a random secret seed (this one keeps its matches and ratings)"
)


def guessable_seed(seed: int) -> bool:
    """Whether a bot could find the ladder's ``seed`` by trying (:data:`GUESSABLE_SEED`): the
    default of earlier versions, 1, for one."""
    return 0 <= seed < GUESSABLE_SEED


def ensure_ladder(
    db: Database,
    *,
    seed: int | None = None,
    table_sizes: tuple[int, ...] = DEFAULT_TABLES,
    control: TimeControl | None = None,
    sandbox: SandboxLimits | None = None,
    options: dict[str, Any] | None = None,
    new: bool = False,
) -> Tournament:
    """The ladder tournament, created with these settings when there is none (an existing
    ladder keeps its own: it resumes where it stopped).  ``new`` creates a new one even so (the
    old one, marked finished, keeps its matches and ratings but is no longer played).  Without
    a ``seed`` a new ladder gets a random one, kept secret from the bots: every match seed, and
    so every throw, follows from it.

    ``options`` never stores a per-run option (:data:`RUN_OPTIONS`), and an existing ladder that
    has one stored (an earlier version stored ``max_tables``) has it removed
    (:func:`forget_run_options`).

    A cycle of more than :data:`MAX_TABLE_CYCLE` table sizes is a :class:`ValueError`, raised
    before anything is written (a ``new`` ladder's predecessor stays the ladder)."""
    if len(table_sizes) > MAX_TABLE_CYCLE:
        raise ValueError(
            f"a ladder's table cycle holds at most {MAX_TABLE_CYCLE} sizes, got {len(table_sizes)}"
        )
    found = find_ladder(db)
    if found is not None and not new:
        return forget_run_options(db, found)
    if found is not None:
        retire(db, found)
    config: dict[str, Any] = {
        "sandbox": sandbox.to_json() if sandbox else None,
        "format_options": {k: v for k, v in (options or {}).items() if k not in RUN_OPTIONS},
    }
    return create_tournament(
        db,
        name=LADDER_NAME,
        fmt="ladder",
        versions=[],
        table_sizes=list(table_sizes),
        games=1,
        seed=secret_seed() if seed is None else seed,
        control=control or TimeControl(1.0, 10.0),
        schedule=[],
        config=config,
    )


def retire(db: Database, t: Tournament) -> None:
    """Mark a ladder that a new one replaces finished: it is played no more (matches it had
    handed out but not played stay queued, unplayed; its results and ratings are kept)."""
    with db.session() as session:
        stored = session.get(Tournament, t.id, with_for_update=True)
        if stored is not None and stored.status != "finished":
            stored.status = "finished"
            stored.finished_at = utcnow()
            session.add(stored)


def forget_run_options(db: Database, t: Tournament) -> Tournament:
    """The ladder without stored per-run options (:data:`RUN_OPTIONS`): removed from its stored
    config, and a ladder an earlier version marked ``finished`` because its stored
    ``max_tables`` was reached is running again (the next run goes on from where it ended)."""
    config = json.loads(t.config or "{}")
    options = dict(config.get("format_options") or {})
    if not any(k in options for k in RUN_OPTIONS):
        return t
    with db.session() as session:
        stored = session.get(Tournament, t.id, with_for_update=True)
        assert stored is not None
        config = json.loads(stored.config or "{}")
        had_limit = "max_tables" in (config.get("format_options") or {})
        config["format_options"] = {
            k: v for k, v in (config.get("format_options") or {}).items() if k not in RUN_OPTIONS
        }
        stored.config = json.dumps(config)
        if had_limit and stored.status == "finished":
            stored.status = "running"
            stored.finished_at = None
        session.add(stored)
        session.flush()
        session.refresh(stored)
        return stored


def stored_differences(
    t: Tournament,
    *,
    seed: int | None = None,
    table_sizes: tuple[int, ...] | None = None,
    move_time: float | None = None,
    bank: float | None = None,
    sandboxed: bool | None = None,
) -> list[tuple[str, str, str]]:
    """Where the settings a run asked for differ from the stored ladder's (which are kept), as
    ``(option, stored, asked)`` in words; an argument left out (None) is not compared."""
    out: list[tuple[str, str, str]] = []
    if seed is not None and seed != t.seed:
        out.append(("--seed", str(t.seed), str(seed)))
    stored_sizes = tuple(int(k) for k in t.table_sizes.split(",") if k)
    if table_sizes is not None and tuple(table_sizes) != stored_sizes:
        out.append(("--tables", _sizes(stored_sizes), _sizes(table_sizes)))
    kept = time_control_of(t)
    if move_time is not None and move_time != kept.move_time:
        out.append(("--move-time", f"{kept.move_time:g}", f"{move_time:g}"))
    if bank is not None and bank != kept.bank:
        out.append(("--bank", f"{kept.bank:g}", f"{bank:g}"))
    kept_box = bool(json.loads(t.config or "{}").get("sandbox"))
    if sandboxed is not None and sandboxed != kept_box:
        out.append(("sandbox", _box(kept_box), _box(sandboxed)))
    return out


def _sizes(sizes: tuple[int, ...]) -> str:
    return ",".join(str(k) for k in sizes)


def _box(sandboxed: bool) -> str:
    return "sandboxed" if sandboxed else "unsandboxed"


def sync_field(db: Database, tournament_id: int, active: list[int]) -> list[int]:
    """Append the active versions not yet in the ladder's field (one transaction); return the
    field (version ids by entry)."""
    with db.session() as session:
        session.get(Tournament, tournament_id, with_for_update=True)  # one writer of positions
        entries = session.exec(
            select(TournamentEntry)
            .where(TournamentEntry.tournament_id == tournament_id)
            .order_by(col(TournamentEntry.position))
        ).all()
        field = [e.bot_version_id for e in entries]
        known = set(field)
        for vid in active:
            if vid not in known:
                session.add(
                    TournamentEntry(tournament_id=tournament_id, bot_version_id=vid, position=len(field))
                )
                field.append(vid)
                known.add(vid)
        return field


def entry_count(db: Database, tournament_id: int) -> int:
    with db.session() as session:
        return int(
            session.exec(
                select(func.count())
                .select_from(TournamentEntry)
                .where(TournamentEntry.tournament_id == tournament_id)
            ).one()
        )
