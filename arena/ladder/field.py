"""Who is on the ladder: the ladder tournament, its active bot versions, and its growing field.

The ladder is one stored tournament of format ``ladder`` (named :data:`LADDER_NAME`; the newest
one of that name is *the* ladder).  Its field only grows: each time the format is asked, every
*active* bot version not yet in it is appended as an entry (:func:`sync_field`); a version that
stops being active stays in the field (its history is kept) but is no longer seated.

A version is **active** when its bot is registered and not removed (not a ``file:`` bot, not a
remote bot) and

- it was uploaded on the web (a ``bot_upload`` row) and its upload's status is ``active``
  (validated and not retired), or
- it was registered from the command line (no upload row) and is its bot's newest version.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func
from sqlmodel import col, select

from arena.referee.timecontrol import TimeControl
from arena.sandbox.limits import SandboxLimits
from arena.store.bots import FILE_PREFIX
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Tournament, TournamentEntry
from arena.store.models_accounts import BotUpload, UploadStatus
from arena.store.tournaments import create_tournament

LADDER_NAME = "ladder"
DEFAULT_TABLES = (2, 3, 4)


def active_versions(db: Database) -> list[int]:
    """The active bot version ids (see the module docstring), ascending."""
    with db.session() as session:
        rows = session.exec(
            select(BotVersion.id, BotVersion.bot_id, BotVersion.version, Bot.name)
            .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            .where(col(Bot.removed_at).is_(None), BotVersion.kind == "local")
        ).all()
        uploads = {
            vid: status
            for vid, status in session.exec(select(BotUpload.bot_version_id, BotUpload.status)).all()
        }
    newest: dict[int, int] = {}
    for _vid, bot_id, version, _name in rows:
        newest[bot_id] = max(newest.get(bot_id, 0), version)
    out = []
    for vid, bot_id, version, name in rows:
        if vid is None or name.startswith(FILE_PREFIX):
            continue
        status = uploads.get(vid)
        if status == UploadStatus.ACTIVE or (status is None and version == newest[bot_id]):
            out.append(vid)
    return sorted(out)


def find_ladder(db: Database) -> Tournament | None:
    """The ladder tournament, if there is one."""
    with db.session() as session:
        return session.exec(
            select(Tournament)
            .where(Tournament.format == "ladder", Tournament.name == LADDER_NAME)
            .order_by(col(Tournament.id).desc())
        ).first()


def ensure_ladder(
    db: Database,
    *,
    seed: int = 1,
    table_sizes: tuple[int, ...] = DEFAULT_TABLES,
    control: TimeControl | None = None,
    sandbox: SandboxLimits | None = None,
    options: dict[str, Any] | None = None,
) -> Tournament:
    """The ladder tournament, created with these settings when there is none (an existing
    ladder keeps its own: it resumes where it stopped)."""
    found = find_ladder(db)
    if found is not None:
        return found
    config: dict[str, Any] = {
        "sandbox": sandbox.to_json() if sandbox else None,
        "format_options": dict(options or {}),
    }
    return create_tournament(
        db,
        name=LADDER_NAME,
        fmt="ladder",
        versions=[],
        table_sizes=list(table_sizes),
        games=1,
        seed=seed,
        control=control or TimeControl(1.0, 10.0),
        schedule=[],
        config=config,
    )


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


def ladder_config(t: Tournament) -> dict[str, Any]:
    """The ladder's stored format options."""
    return dict(json.loads(t.config or "{}").get("format_options") or {})


def entry_count(db: Database, tournament_id: int) -> int:
    with db.session() as session:
        return int(
            session.exec(
                select(func.count())
                .select_from(TournamentEntry)
                .where(TournamentEntry.tournament_id == tournament_id)
            ).one()
        )
