"""Asking a tournament's format what to play next, and storing its answer.

The one place where the stored tournament (:mod:`arena.store.tournaments`) meets its format
(:mod:`arena.tournament.formats`): the format's settings come from the tournament row, its
history from the stored matches and byes, and a :class:`~arena.tournament.formats.Play` is
stored in one transaction before anything of it is played.  Asking again with nothing new
recorded stores nothing new, so a coordinator may ask whenever it likes (and a resumed one asks
first thing).
"""

from __future__ import annotations

import json

from arena.store.crosstable import entry_names
from arena.store.db import Database
from arena.store.models import Tournament
from arena.store.tournaments import append_matches, field_versions, get_tournament, stored_history

from .formats import Bye, Format, FormatError, History, Next, Play, Recorded, Settings, make


class NotPullableError(FormatError):
    """A tournament whose matches are not made by a registered format (e.g. the lobby's)."""


def settings_of(t: Tournament, entries: int) -> Settings:
    """The format settings a stored tournament was created with."""
    config = json.loads(t.config or "{}")
    rounds = config.get("rounds")
    return Settings(
        entries=entries,
        table_sizes=tuple(int(k) for k in t.table_sizes.split(",") if k),
        games=t.games,
        seed=t.seed,
        rounds=int(rounds) if rounds is not None else None,
        options=dict(config.get("format_options") or {}),
    )


def format_of(db: Database, tournament_id: int) -> tuple[Format, list[int]]:
    """The tournament's format and its field (bot version ids by entry)."""
    t = get_tournament(db, tournament_id)
    field = field_versions(db, tournament_id)
    try:
        return make(t.format, settings_of(t, len(field))), field
    except FormatError as exc:
        raise NotPullableError(f"tournament {tournament_id} ({t.format}): {exc}") from None


def ranked_versions(db: Database, tournament_id: int) -> list[int]:
    """The field's bot versions in the order of the format's own standing (a Swiss's points and
    Buchholz, a finished knockout's places), for the cross table to follow; empty when the
    format has none or the tournament no registered format."""
    try:
        fmt, field = format_of(db, tournament_id)
    except NotPullableError:
        return []
    order = fmt.ranking(history_of(db, tournament_id, field))
    return [field[e] for e in order] if order else []


def planned_total(db: Database, tournament_id: int) -> int | None:
    """How many matches the tournament will have in all when its format knows that in advance
    (a fixed schedule, every round of a Swiss, a knockout; a sequential test's most), else None
    (the ladder, an endless lobby, a tournament without a registered format)."""
    try:
        return format_of(db, tournament_id)[0].planned()
    except NotPullableError:
        return None


def history_of(db: Database, tournament_id: int, field: list[int]) -> History:
    """The tournament's stored matches and byes as its format sees them (entries, not versions)."""
    entry = {vid: i for i, vid in enumerate(field)}
    matches, byes = stored_history(db, tournament_id)
    return History(
        matches=tuple(
            Recorded(
                ordinal=m.ordinal,
                round=m.round,
                group=m.group,
                seed=m.seed,
                seating=tuple(entry[v] for v in m.version_ids),
                status=m.status,
                placings=m.placings,
                scores=m.scores,
            )
            for m in matches
        ),
        byes=tuple(Bye(b.round, entry[b.version_id], b.points) for b in byes),
    )


def pull(db: Database, tournament_id: int) -> Next:
    """Ask the tournament's format what comes next and store a :class:`Play` (queued matches and
    byes, one transaction); return the answer."""
    fmt, field = format_of(db, tournament_id)
    history = history_of(db, tournament_id, field)
    answer = fmt.next(history)
    if isinstance(answer, Play):
        append_matches(
            db,
            tournament_id,
            seen=len(history.matches),
            matches=[(p.round, p.seed, p.group, tuple(field[e] for e in p.seating)) for p in answer.pairings],
            byes=[(b.round, field[b.entry], b.points) for b in answer.byes],
        )
    return answer


def report(db: Database, tournament_id: int) -> list[str]:
    """How the tournament's format stands (Swiss points, a knockout's bracket), as lines; none
    for formats without a report or tournaments without a registered format."""
    try:
        fmt, field = format_of(db, tournament_id)
    except NotPullableError:
        return []
    return fmt.report(history_of(db, tournament_id, field), entry_names(db, field))
