"""Tournaments, their matches and replays in the database (the coordinator is the one writer)."""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from arena.referee import MatchResult
from arena.referee.timecontrol import TimeControl
from arena.safetext import printable
from arena.sandbox.limits import SandboxLimits
from arena.tournament.task import MatchTask as MatchTask
from arena.tournament.task import SeatTask as SeatTask
from arena.tournament.task import compress_replay as compress_replay
from arena.tournament.task import pack_replay as pack_replay

from .bots import check_stored_file, command_of
from .db import Database, StoreError
from .errors import StoredTimeControlError
from .models import (
    Bot,
    BotVersion,
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    Tournament,
    TournamentBye,
    TournamentEntry,
    utcnow,
)
from .owners import claim, reap_abandoned

log = logging.getLogger(__name__)


class UnknownTournamentError(StoreError):
    """No tournament with that id."""


class UnknownMatchError(StoreError):
    """No match with that id."""


class CorruptReplayError(StoreError):
    """A stored replay whose bytes do not decompress or do not match their hash."""


def create_tournament(
    db: Database,
    *,
    name: str,
    fmt: str,
    versions: list[BotVersion],
    table_sizes: list[int],
    games: int,
    seed: int,
    control: TimeControl,
    schedule: list[tuple[int, str, tuple[int, ...]]],
    config: dict[str, Any] | None = None,
    rules: str | None = None,
) -> Tournament:
    """Store a tournament and its whole schedule (``(seed, group, seating)`` with seating as
    indices into ``versions``), every match queued.  ``control`` is stored in the tournament's
    ``move_time``, ``bank`` and ``cpu_clock`` columns (read back by :func:`time_control_of`);
    an unlimited one cannot be stored (:class:`ValueError`)."""
    if control.unlimited:
        raise ValueError("a stored tournament needs a time limit; unlimited is for a single debug match")
    with db.session() as session:
        t = Tournament(
            name=name,
            format=fmt,
            table_sizes=",".join(str(k) for k in table_sizes),
            games=games,
            seed=seed,
            move_time=control.move_time,
            bank=control.bank,
            cpu_clock=control.cpu,
            config=json.dumps(config or {}),
            rules=rules,
        )
        session.add(t)
        session.flush()
        assert t.id is not None
        for i, v in enumerate(versions):
            assert v.id is not None
            session.add(
                TournamentEntry(
                    tournament_id=t.id,
                    bot_version_id=v.id,
                    role="candidate" if fmt == "gauntlet" and i == 0 else "field",
                    position=i,
                )
            )
        for ordinal, (match_seed, group, seating) in enumerate(schedule):
            m = Match(tournament_id=t.id, ordinal=ordinal, seed=match_seed, group_key=group)
            session.add(m)
            session.flush()
            assert m.id is not None
            for seat, entry in enumerate(seating):
                vid = versions[entry].id
                assert vid is not None
                session.add(MatchSeat(match_id=m.id, seat=seat, bot_version_id=vid))
        session.flush()
        session.refresh(t)
        return t


def time_control_text(t: Tournament) -> str:
    """The stored time control in words (``1s + 10s bank``); one out of bounds (see
    :func:`time_control_of`) is shown as stored and said to be unplayable, not an error."""
    try:
        return time_control_of(t).describe()
    except StoredTimeControlError:
        return f"move time {t.move_time:g} s, bank {t.bank:g} s (out of bounds: cannot be played)"


def time_control_of(t: Tournament) -> TimeControl:
    """The time control a stored tournament's matches are played under: the one place that
    rebuilds it from its columns (the worker, the Dask cluster, the lobby, the CLI and the web
    read it from here).  Raises :class:`StoredTimeControlError` for one out of bounds (stored
    by an earlier version that let ``--move-time inf`` through)."""
    try:
        return TimeControl(t.move_time, t.bank, cpu=bool(t.cpu_clock))
    except ValueError as exc:
        raise StoredTimeControlError(
            f"tournament {t.id} ({t.name}) cannot be played: its stored time control is out of "
            f"bounds ({exc}); create a new tournament with other --move-time and --bank"
        ) from None


def get_tournament(db: Database, tournament_id: int) -> Tournament:
    """The tournament, or :class:`UnknownTournamentError`."""
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            raise UnknownTournamentError(f"no tournament {tournament_id}; see 'arena tournament list'")
        return t


def list_tournaments(db: Database) -> list[tuple[Tournament, Counter[str]]]:
    """Every tournament, newest first, with its matches counted by status."""
    with db.session() as session:
        out = []
        for t in session.exec(select(Tournament).order_by(col(Tournament.id).desc())).all():
            counts = Counter(session.exec(select(Match.status).where(Match.tournament_id == t.id)).all())
            out.append((t, counts))
        return out


def status_counts(db: Database, tournament_id: int) -> Counter[str]:
    """The tournament's matches counted by status."""
    with db.session() as session:
        return Counter(session.exec(select(Match.status).where(Match.tournament_id == tournament_id)).all())


def prepare_resume(db: Database, tournament_id: int) -> int:
    """Put matches left ``running`` by a dead coordinator back in the queue; return how many.

    Their results were never written (results and status are written together), so replaying
    them loses nothing and plays nothing twice.
    """
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            raise UnknownTournamentError(f"no tournament {tournament_id}; see 'arena tournament list'")
        stale = session.exec(
            select(Match).where(Match.tournament_id == tournament_id, Match.status == MatchStatus.RUNNING)
        ).all()
        for m in stale:
            m.status = MatchStatus.QUEUED
            m.started_at = None
            session.add(m)
        if t.status != "finished":
            t.status = "running"
            session.add(t)
        return len(stale)


def tournament_sandbox(db: Database, tournament_id: int) -> SandboxLimits | None:
    """The sandbox limits the tournament's bots run under (None: not sandboxed)."""
    config = json.loads(get_tournament(db, tournament_id).config or "{}")
    return SandboxLimits.from_json(config["sandbox"]) if config.get("sandbox") else None


def queued_tasks(db: Database, tournament_id: int) -> list[MatchTask]:
    """The tournament's queued matches as worker tasks, in schedule order."""
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            raise UnknownTournamentError(f"no tournament {tournament_id}")
        versions: dict[int, tuple[BotVersion, Bot]] = {
            v.id: (v, b)
            for v, b in session.exec(
                select(BotVersion, Bot)
                .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
                .join(TournamentEntry, col(TournamentEntry.bot_version_id) == col(BotVersion.id))
                .where(TournamentEntry.tournament_id == tournament_id)
            ).all()
            if v.id is not None
        }
        matches = session.exec(
            select(Match)
            .where(Match.tournament_id == tournament_id, Match.status == MatchStatus.QUEUED)
            .order_by(col(Match.ordinal))
        ).all()
        ids = [m.id for m in matches]
        config = json.loads(t.config or "{}")
        sandbox = SandboxLimits.from_json(config["sandbox"]) if config.get("sandbox") else None
        control = time_control_of(t)
        seats: dict[int, list[MatchSeat]] = {}
        for s in session.exec(
            select(MatchSeat).where(col(MatchSeat.match_id).in_(ids)).order_by(col(MatchSeat.seat))
        ).all():
            seats.setdefault(s.match_id, []).append(s)
        tasks = []
        for m in matches:
            assert m.id is not None
            seat_tasks = []
            for s in seats[m.id]:
                v, b = versions[s.bot_version_id]
                seat_tasks.append(SeatTask(s.bot_version_id, b.name, tuple(command_of(v)), v.persistent))
            tasks.append(
                MatchTask(
                    m.id,
                    tournament_id,
                    m.seed,
                    tuple(seat_tasks),
                    control,
                    sandbox=sandbox,
                    rules=t.rules or "1",
                )
            )
        return tasks


def check_entry_files(
    db: Database, tournament_id: int, originals: Callable[[str], Path | None] = lambda name: None
) -> None:
    """:class:`arena.store.errors.MissingBotFileError` naming the first entry of the tournament
    whose stored bot file is gone (see :func:`arena.store.bots.check_stored_file`; ``originals(name)``
    may name a file to put it back from): checked before a run starts, so that a missing file is a
    clear error rather than every game a crash."""
    with db.session() as session:
        rows = session.exec(
            select(BotVersion, Bot)
            .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            .join(TournamentEntry, col(TournamentEntry.bot_version_id) == col(BotVersion.id))
            .where(TournamentEntry.tournament_id == tournament_id)
            .order_by(col(TournamentEntry.position), col(TournamentEntry.bot_version_id))
        ).all()
    for v, b in rows:
        check_stored_file(v, b.name, originals(b.name))


def mark_running(db: Database, match_ids: list[int]) -> None:
    """Matches handed to workers: the queued ones among ``match_ids`` become running (one
    transaction, one query for the whole batch)."""
    if not match_ids:
        return
    table = Match.__table__  # type: ignore[attr-defined]
    change = (
        update(table)
        .where(table.c.id.in_(match_ids), table.c.status == MatchStatus.QUEUED)
        .values(status=MatchStatus.RUNNING, started_at=utcnow(), attempts=table.c.attempts + 1)
    )
    with db.session() as session:
        session.connection().execute(change)


def _packed(result: MatchResult) -> tuple[bytes, str]:
    return result.packed if result.packed is not None else compress_replay(result.replay)


def record_result(
    db: Database, match_id: int, result: MatchResult, after: Callable[[Session, Match], None] | None = None
) -> bool:
    """Write a finished match: status, every seat and the replay, in one transaction; True.
    ``after(session, match)`` runs last in that transaction (the ladder's rating update), so it
    is committed with the result or not at all.

    Idempotent: a match that is already finished is left as it is, and False is returned (and
    logged): a late or duplicate result (a second coordinator's, a result that crossed a resume)
    is ignored, never an error.  The match row is locked first (``SELECT ... FOR UPDATE`` on
    PostgreSQL; SQLite serialises writers anyway), so two writers of one match cannot both see
    it unfinished; should a replay row appear all the same, the write is dropped as a duplicate.
    """
    blob, digest = _packed(result)
    try:
        return _record_result(db, match_id, result, blob, digest, after)
    except IntegrityError:
        with db.session() as session:
            m = session.get(Match, match_id)
            if m is None or m.status != MatchStatus.FINISHED:
                raise
        log.info("match %s was recorded by another writer meanwhile; ignoring this result", match_id)
        return False


def _record_result(
    db: Database,
    match_id: int,
    result: MatchResult,
    blob: bytes,
    digest: str,
    after: Callable[[Session, Match], None] | None = None,
) -> bool:
    with db.session() as session:
        m = session.get(Match, match_id, with_for_update=True)
        if m is None:
            raise UnknownMatchError(f"no match {match_id}")
        if m.status == MatchStatus.FINISHED:
            log.info("match %s is already finished; ignoring a second result", match_id)
            return False
        m.status = MatchStatus.FINISHED
        m.termination = result.termination
        m.finished_at = utcnow()
        m.duration = result.duration
        m.error = None
        session.add(m)
        for s in session.exec(select(MatchSeat).where(MatchSeat.match_id == match_id)).all():
            o = result.seats[s.seat]
            s.score, s.placing, s.termination = o.score, o.placing, o.termination
            s.detail = printable(o.detail) if o.detail else None  # a bot's words: no NUL, no escapes
            s.think_total, s.think_max, s.decisions = o.think_total, o.think_max, o.decisions
            s.cpu_time = o.cpu_time
            session.add(s)
        session.add(Replay(match_id=match_id, sha256=digest, size=len(result.replay), data=blob))
        session.flush()
        if after is not None:
            after(session, m)
    return True


def record_results(
    db: Database,
    items: Sequence[tuple[int, MatchResult]],
    after: Callable[[Session, Match], None] | None = None,
) -> list[bool]:
    """Write a batch of finished matches in ONE transaction (what the coordinator absorbs at once);
    one bool per item, as :func:`record_result` returns it.

    Each match is written exactly as :func:`record_result` writes it (status, seats, replay) and
    ``after(session, match)`` runs for each recorded match, in the order given, in the same
    transaction: killed at any moment, the database holds the whole batch (and its ratings) or
    none of it.  Matches already finished, or named twice in the batch, are skipped (False).
    Should another writer record one of them meanwhile (an integrity error), the batch is rolled
    back and written one match at a time instead.  Raises :class:`UnknownMatchError` for an id
    with no match (nothing is written).
    """
    if not items:
        return []
    packed = [_packed(result) for _, result in items]
    try:
        return _record_results(db, items, packed, after)
    except IntegrityError:
        log.info("a match of this batch was recorded by another writer meanwhile; one at a time")
        return [record_result(db, mid, result, after) for mid, result in items]


def _record_results(
    db: Database,
    items: Sequence[tuple[int, MatchResult]],
    packed: list[tuple[bytes, str]],
    after: Callable[[Session, Match], None] | None,
) -> list[bool]:
    ids = sorted({mid for mid, _ in items})  # locked in id order: two batches never deadlock
    with db.session() as session:
        locked = select(Match).where(col(Match.id).in_(ids)).order_by(col(Match.id)).with_for_update()
        matches = {m.id: m for m in session.exec(locked).all()}
        missing = [mid for mid in ids if mid not in matches]
        if missing:
            raise UnknownMatchError(f"no match {missing[0]}")
        # seats and replays are written with one executemany each, without ORM objects (the
        # per-attribute cost of model objects was most of a batch's time)
        seat_rows = session.exec(
            select(MatchSeat.match_id, MatchSeat.seat).where(col(MatchSeat.match_id).in_(ids))
        )
        seats: dict[int, list[int]] = {}
        for mid, seat in seat_rows.all():
            seats.setdefault(mid, []).append(seat)
        out: list[bool] = []
        recorded: list[Match] = []
        seat_values: list[dict[str, Any]] = []
        replays: list[dict[str, Any]] = []
        for (mid, result), (blob, digest) in zip(items, packed, strict=True):
            m = matches[mid]
            if m.status == MatchStatus.FINISHED:
                log.info("match %s is already finished; ignoring a second result", mid)
                out.append(False)
                continue
            m.status = MatchStatus.FINISHED
            m.termination = result.termination
            m.finished_at = utcnow()  # per match: the finishing order stays the recording order
            m.duration = result.duration
            m.error = None
            session.add(m)
            for seat in seats.get(mid, []):
                o = result.seats[seat]
                seat_values.append({
                    "m": mid, "s": seat, "score": o.score, "placing": o.placing, "termination": o.termination,
                    "detail": printable(o.detail) if o.detail else None, "think_total": o.think_total,
                    "think_max": o.think_max, "decisions": o.decisions, "cpu_time": o.cpu_time,
                })  # fmt: skip
            replays.append({"match_id": mid, "sha256": digest, "size": len(result.replay), "data": blob})
            recorded.append(m)
            out.append(True)
        session.flush()
        if seat_values:
            table = MatchSeat.__table__  # type: ignore[attr-defined]
            names = ["score", "placing", "termination", "detail"]
            names += ["think_total", "think_max", "decisions", "cpu_time"]
            change = (
                update(table)
                .where(table.c.match_id == bindparam("m"), table.c.seat == bindparam("s"))
                .values({n: bindparam(n) for n in names})
            )
            session.connection().execute(change, seat_values)
        if replays:
            session.connection().execute(insert(Replay.__table__), replays)  # type: ignore[attr-defined]
        if after is not None:
            for m in recorded:
                after(session, m)
    return out


def record_failure(db: Database, match_id: int, error: str) -> None:
    """A match the arena itself could not play (not a bot's fault): failed, with the error."""
    with db.session() as session:
        m = session.get(Match, match_id)
        if m is None or m.status == MatchStatus.FINISHED:
            return
        m.status = MatchStatus.FAILED
        m.error = printable(error[:2000])
        m.finished_at = utcnow()
        session.add(m)


def mark_tournament_running(db: Database, tournament_id: int) -> None:
    """Mark a tournament that is being played ``running`` (a lobby's, from its start)."""
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        if t is not None and t.status != "running":
            t.status = "running"
            t.finished_at = None
            session.add(t)


def finish_tournament(db: Database, tournament_id: int) -> None:
    """Mark the tournament finished when no match is queued or running."""
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            return
        open_ = session.exec(
            select(Match.id).where(
                Match.tournament_id == tournament_id,
                col(Match.status).in_([MatchStatus.QUEUED, MatchStatus.RUNNING]),
            )
        ).first()
        if open_ is None:
            t.status = "finished"
            t.finished_at = utcnow()
            session.add(t)


def load_replay(db: Database, match_id: int) -> str:
    """A match's replay text, checked against its stored hash.

    Raises :class:`UnknownMatchError` when there is none and :class:`CorruptReplayError` when
    the stored bytes are damaged.
    """
    with db.session() as session:
        r = session.get(Replay, match_id)
        if r is None:
            raise UnknownMatchError(f"match {match_id} has no replay (unknown or not finished)")
        try:
            text = zlib.decompress(r.data).decode("utf-8")
        except (zlib.error, UnicodeDecodeError) as exc:
            raise CorruptReplayError(f"the replay of match {match_id} is corrupt: {exc}") from None
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != r.sha256:
            raise CorruptReplayError(
                f"the replay of match {match_id} does not match its stored sha256 (damaged in storage)"
            )
        return text


def add_match(db: Database, tournament_id: int | None, seed: int, group: str, version_ids: list[int]) -> int:
    """Append one running match with ``version_ids[k]`` in seat k to a tournament whose matches
    are made as they happen (the remote-bot lobby), or to no tournament (``None``: a stand-alone
    ``arena match``, owned by this process: :mod:`arena.store.owners`); return its id."""
    owner = (
        col(Match.tournament_id).is_(None) if tournament_id is None else Match.tournament_id == tournament_id
    )
    if tournament_id is None:
        reap_abandoned(db)  # earlier stand-alone matches whose process was killed: failed
    with db.session() as session:
        last = session.exec(select(Match.ordinal).where(owner).order_by(col(Match.ordinal).desc())).first()
        m = Match(
            tournament_id=tournament_id,
            ordinal=0 if last is None else last + 1,
            seed=seed,
            group_key=group,
            status=MatchStatus.RUNNING,
            started_at=utcnow(),
            attempts=1,
        )
        session.add(m)
        session.flush()
        assert m.id is not None
        for seat, vid in enumerate(version_ids):
            session.add(MatchSeat(match_id=m.id, seat=seat, bot_version_id=vid))
        if tournament_id is None:
            claim(session, m.id)  # only this process will finish it (arena.store.owners)
        return m.id


@dataclass(frozen=True)
class StoredMatch:
    """A tournament's match as its format sees it: bot versions by seat, and (when finished)
    placings and scores by seat."""

    ordinal: int
    round: int
    group: str
    seed: int
    version_ids: tuple[int, ...]
    status: str
    placings: tuple[int, ...] | None
    scores: tuple[int, ...] | None


@dataclass(frozen=True)
class StoredBye:
    """A bot version that sat out a round, and what it scored."""

    round: int
    version_id: int
    points: float


def field_versions(db: Database, tournament_id: int) -> list[int]:
    """The tournament's bot version ids in field order (registration order: the entries formats
    pair).  Tournaments made before entries had positions: the candidate first, then by id."""
    with db.session() as session:
        entries = session.exec(
            select(TournamentEntry).where(TournamentEntry.tournament_id == tournament_id)
        ).all()
    if not entries:  # no field: say so if there is no such tournament (after the session above:
        get_tournament(db, tournament_id)  # a second session inside it would wait on its lock)
    ordered = sorted(
        entries,
        key=lambda e: (
            e.position if e.position is not None else len(entries),
            e.role != "candidate",
            e.bot_version_id,
        ),
    )
    return [e.bot_version_id for e in ordered]


def stored_history(db: Database, tournament_id: int) -> tuple[list[StoredMatch], list[StoredBye]]:
    """Every match of the tournament in schedule order (with seats and outcomes), and its byes."""
    with db.session() as session:
        matches = session.exec(
            select(Match).where(Match.tournament_id == tournament_id).order_by(col(Match.ordinal))
        ).all()
        seats: dict[int, list[MatchSeat]] = {}
        for s in session.exec(
            select(MatchSeat)
            .join(Match, col(Match.id) == col(MatchSeat.match_id))
            .where(Match.tournament_id == tournament_id)
            .order_by(col(MatchSeat.match_id), col(MatchSeat.seat))
        ).all():
            seats.setdefault(s.match_id, []).append(s)
        out: list[StoredMatch] = []
        for m in matches:
            assert m.id is not None
            ss = seats.get(m.id, [])
            finished = m.status == MatchStatus.FINISHED and all(x.placing is not None for x in ss)
            out.append(
                StoredMatch(
                    ordinal=m.ordinal,
                    round=m.round,
                    group=m.group_key,
                    seed=m.seed,
                    version_ids=tuple(x.bot_version_id for x in ss),
                    status=m.status,
                    placings=tuple(int(x.placing or 0) for x in ss) if finished else None,
                    scores=tuple(int(x.score or 0) for x in ss) if finished else None,
                )
            )
        byes = [
            StoredBye(b.round, b.bot_version_id, b.points)
            for b in session.exec(
                select(TournamentBye)
                .where(TournamentBye.tournament_id == tournament_id)
                .order_by(col(TournamentBye.round), col(TournamentBye.bot_version_id))
            ).all()
        ]
        return out, byes


def append_matches(
    db: Database,
    tournament_id: int,
    *,
    seen: int,
    matches: list[tuple[int, int, str, tuple[int, ...]]],
    byes: Sequence[tuple[int, int, float]] = (),
) -> int:
    """Append what a format handed out, in one transaction: ``matches`` as ``(round, seed,
    group, version ids by seat)``, queued, after the existing ones, and ``byes`` as ``(round,
    version id, points)``; return how many matches were added.

    ``seen`` is how many matches the format was shown: if the tournament has a different number
    now (another writer appended meanwhile), nothing is written and 0 is returned, so one answer
    is never stored twice.
    """
    with db.session() as session:
        t = session.get(Tournament, tournament_id, with_for_update=True)
        if t is None:
            raise UnknownTournamentError(f"no tournament {tournament_id}; see 'arena tournament list'")
        count, top = session.exec(  # counted, not loaded: a ladder holds 100,000s of matches
            select(func.count(), func.max(Match.ordinal)).where(Match.tournament_id == tournament_id)
        ).one()
        if count != seen:
            log.info("tournament %s changed while its format was asked; not appending", tournament_id)
            return 0
        nxt = (-1 if top is None else int(top)) + 1
        for i, (rnd, match_seed, group, version_ids) in enumerate(matches):
            m = Match(
                tournament_id=tournament_id, ordinal=nxt + i, seed=match_seed, group_key=group, round=rnd
            )
            session.add(m)
            session.flush()
            assert m.id is not None
            for seat, vid in enumerate(version_ids):
                session.add(MatchSeat(match_id=m.id, seat=seat, bot_version_id=vid))
        for rnd, vid, points in byes:
            bye = TournamentBye(tournament_id=tournament_id, round=rnd, bot_version_id=vid, points=points)
            session.add(bye)
        if matches and t.status == "finished":
            t.status = "running"
            t.finished_at = None
            session.add(t)
        session.flush()
        return len(matches)
