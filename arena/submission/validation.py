"""Validation of an uploaded version: sandboxed matches against sample bots, stored like any match.

Plan: :data:`GAMES` seeds against each of :data:`OPPONENTS`, each seed in both seatings (the
same dice), under :data:`CONTROL`.  The matches are ad-hoc matches (no tournament, group
``validation``, not rated); their ids are kept on the upload.  A match's result and its effect on
the upload (a forfeit: ``rejected`` with the reason and the bot's stderr tail) are written in one
transaction (``record_result``'s ``after`` hook), so a killed server never loses a finished match
nor half-records one.  When every match is finished without a forfeit of the candidate the
version becomes ``active`` and (unless the upload asked to keep both) the bot's previous active
versions retire.

Restart: :func:`recover` puts ``validating`` uploads back to ``pending``; a claimed upload keeps
its finished matches and replaces only those a dead server left unfinished (they are recorded as
failed: "abandoned" when the new server starts, :mod:`arena.store.owners`, else "interrupted").
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import update
from sqlmodel import Session, col, select

from arena.botref import resolve, stored_version
from arena.endings import is_forfeit
from arena.referee import MatchResult
from arena.referee.timecontrol import TimeControl
from arena.sandbox.limits import SandboxLimits
from arena.seeds import secret_seed
from arena.store.bots import command_of
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat, MatchStatus, utcnow
from arena.store.models_accounts import BotUpload, UploadStatus
from arena.store.tournaments import MatchTask, SeatTask, add_match, record_failure, record_result

GAMES = 1  # seeds per opponent (each played in both seatings)
OPPONENTS = ("random",)
CONTROL = TimeControl(1.0, 10.0)
GROUP = "validation"
STDERR_LIMIT = 4096
INTERRUPTED = "interrupted: the server stopped during validation; the match was played again"


@dataclass(frozen=True)
class Slot:
    """One planned validation match: which seed it plays (``pair``: the two seatings of a seed
    share it), against whom, and which seat the candidate takes (of two)."""

    pair: int
    opponent: str
    candidate_seat: int


def plan() -> list[Slot]:
    """The validation matches of an upload, in order (the upload keeps their match ids in it)."""
    slots: list[Slot] = []
    for opponent in OPPONENTS:
        for _ in range(GAMES):
            pair = len(slots) // 2
            slots += [Slot(pair, opponent, 0), Slot(pair, opponent, 1)]
    return slots


def _existing(db: Database, ids: list[int | None]) -> dict[int, tuple[int, str]]:
    """The seed and status of each match an earlier attempt made (by id; a missing row is left out)."""
    found: dict[int, tuple[int, str]] = {}
    with db.session() as session:
        for mid in ids:
            if mid is not None and (m := session.get(Match, mid)) is not None:
                found[mid] = (m.seed, m.status)
    return found


def _seeds(slots: list[Slot], ids: list[int | None], existing: dict[int, tuple[int, str]]) -> dict[int, int]:
    """Each pair's seed: the one a match of the pair was made with (by an earlier attempt, so a
    replaced match plays the dice of its other seating), else a new secret one
    (:func:`arena.seeds.secret_seed`).  Validation seeds used to follow from the upload's id
    (``random.Random(f"validation-{id}")``): a bot that guessed its upload id knew its dice."""
    seeds: dict[int, int] = {}
    for slot, mid in zip(slots, ids, strict=True):
        if mid is not None and slot.pair not in seeds and mid in existing:
            seeds[slot.pair] = existing[mid][0]
    for slot in slots:
        seeds.setdefault(slot.pair, secret_seed())
    return seeds


def recover(db: Database) -> int:
    """At a server's start: uploads a dead server left ``validating`` go back to ``pending``;
    returns how many."""
    with db.session() as session:
        rows = session.exec(select(BotUpload).where(BotUpload.status == UploadStatus.VALIDATING)).all()
        for row in rows:
            row.status = UploadStatus.PENDING
            session.add(row)
        return len(rows)


def claim(db: Database) -> int | None:
    """Take the oldest ``pending`` upload (``validating`` now, one more attempt); its id, or None.
    Safe with several servers on one database: the status change is conditional."""
    with db.session() as session:
        ids = session.exec(
            select(BotUpload.id)
            .where(BotUpload.status == UploadStatus.PENDING)
            .order_by(col(BotUpload.id))
            .limit(5)
        ).all()
    for upload_id in ids:
        with db.session() as session:
            done = session.execute(
                update(BotUpload)
                .where(col(BotUpload.id) == upload_id, col(BotUpload.status) == UploadStatus.PENDING)
                .values(
                    status=UploadStatus.VALIDATING,
                    attempts=BotUpload.attempts + 1,
                    started_at=utcnow(),
                )
            )
            if done.rowcount == 1:  # type: ignore[attr-defined]
                return upload_id
    return None


def _seat(session: Session, version_id: int) -> SeatTask:
    v = session.get(BotVersion, version_id)
    assert v is not None and v.id is not None
    bot = session.get(Bot, v.bot_id)
    name = bot.name if bot is not None else f"v{v.id}"
    return SeatTask(v.id, name, tuple(command_of(v)), persistent=False)


def opponent_version(db: Database, name: str) -> int:
    """The stored version of the sample bot ``name`` (its own file): the registered bot of that
    name, registered the first time, so every validation match records the one opponent (see
    :func:`arena.botref.sample_version`).  Older databases may also hold validation matches
    against ``file:<name>_bot.py``; they stay as they are."""
    v = stored_version(db, resolve(name))
    assert v.id is not None
    return v.id


def tasks_for(db: Database, upload_id: int, sandbox: SandboxLimits | None) -> list[MatchTask]:
    """The matches still to play for a claimed upload (made now, ``running``; their ids saved on
    the upload).  Finished matches of an earlier attempt are kept; unfinished ones are recorded
    as failed ("interrupted") and replaced."""
    with db.session() as session:
        upload = session.get(BotUpload, upload_id)
        assert upload is not None
        candidate = upload.bot_version_id
        ids = _ids(upload)
    slots = plan()
    ids = (ids + [None] * len(slots))[: len(slots)]
    existing = _existing(db, ids)
    seeds = _seeds(slots, ids, existing)
    todo: list[tuple[int, Slot, list[int]]] = []
    for k, slot in enumerate(slots):
        mid = ids[k]
        if mid is not None:
            status = existing[mid][1] if mid in existing else None
            if status == MatchStatus.FINISHED:
                continue
            if status in (MatchStatus.RUNNING, MatchStatus.QUEUED):
                record_failure(db, mid, INTERRUPTED)
        opp = opponent_version(db, slot.opponent)
        seating = [candidate, opp] if slot.candidate_seat == 0 else [opp, candidate]
        ids[k] = add_match(db, None, seeds[slot.pair], GROUP, seating)
        todo.append((ids[k] or 0, slot, seating))
    with db.session() as session:
        upload = session.get(BotUpload, upload_id)
        assert upload is not None
        upload.match_ids = json.dumps(ids)
        session.add(upload)
    tasks = []
    with db.session() as session:
        for mid, slot, seating in todo:
            seats = tuple(_seat(session, vid) for vid in seating)
            tasks.append(MatchTask(mid, 0, seeds[slot.pair], seats, CONTROL, sandbox))
    return tasks


def _ids(upload: BotUpload) -> list[int | None]:
    try:
        raw = json.loads(upload.match_ids or "[]")
    except ValueError:
        return []
    return [i if isinstance(i, int) else None for i in raw]


def record(db: Database, upload_id: int, match_id: int, result: MatchResult) -> None:
    """Store a validation match's result and, in the same transaction, its effect on the upload:
    the candidate's forfeit rejects it (reason, detail and stderr tail kept)."""

    def after(session: Session, match: Match) -> None:
        upload = session.get(BotUpload, upload_id)
        if upload is None or upload.status != UploadStatus.VALIDATING:
            return
        seats = session.exec(select(MatchSeat).where(MatchSeat.match_id == match_id)).all()
        mine = [s.seat for s in seats if s.bot_version_id == upload.bot_version_id]
        for f in result.forfeits:
            if f.seat in mine:
                upload.status = UploadStatus.REJECTED
                upload.reason = f"{f.reason}: {f.detail}" if f.detail else str(f.reason)
                tail = str(f.evidence.get("stderr_tail", ""))
                upload.stderr_tail = tail[-STDERR_LIMIT:] or None
                upload.finished_at = utcnow()
                session.add(upload)
                return

    record_result(db, match_id, result, after=after)


def fail_match(db: Database, match_id: int, error: str) -> None:
    """A validation match the arena could not play (not the bot's fault)."""
    record_failure(db, match_id, error)


def conclude(db: Database, upload_id: int) -> str:
    """Decide a claimed upload whose matches have all ended: ``rejected`` (already, by a forfeit),
    ``active`` (every match finished without the candidate's forfeit; the previous active
    versions retire unless kept) or back to ``pending`` (a match failed for the arena's reasons:
    it is tried again, up to 3 attempts, then rejected).  Returns the status."""
    with db.session() as session:
        upload = session.get(BotUpload, upload_id)
        assert upload is not None
        if upload.status != UploadStatus.VALIDATING:
            return upload.status
        ids = [i for i in _ids(upload) if i is not None]
        matches = session.exec(select(Match).where(col(Match.id).in_(ids))).all()
        statuses = [m.status for m in matches]
        if len(matches) < len(plan()) or any(s != MatchStatus.FINISHED for s in statuses):
            errors = [m.error for m in matches if m.status == MatchStatus.FAILED and m.error]
            if upload.attempts >= 3:
                upload.status = UploadStatus.REJECTED
                upload.reason = "validation could not be played: " + "; ".join(errors or ["unknown error"])
                upload.finished_at = utcnow()
            else:
                upload.status = UploadStatus.PENDING
            session.add(upload)
            return upload.status
        seats = session.exec(
            select(MatchSeat).where(
                col(MatchSeat.match_id).in_(ids), MatchSeat.bot_version_id == upload.bot_version_id
            )
        ).all()
        bad = [s for s in seats if is_forfeit(s.termination)]
        if bad:  # a forfeit recorded without its upload effect (cannot happen; be safe)
            upload.status = UploadStatus.REJECTED
            upload.reason = f"{bad[0].termination}: {bad[0].detail or ''}".rstrip(": ")
        else:
            upload.status = UploadStatus.ACTIVE
            upload.reason = None
            _retire_previous(session, upload)
        upload.finished_at = utcnow()
        session.add(upload)
        return upload.status


def _retire_previous(session: Session, upload: BotUpload) -> None:
    """The bot's older active versions retire (unless this upload keeps them); this one retires
    at once when a newer version is already active without keeping its predecessors
    (validations may end out of order)."""
    me = session.get(BotVersion, upload.bot_version_id)
    assert me is not None
    siblings = {v.id: v for v in session.exec(select(BotVersion).where(BotVersion.bot_id == me.bot_id)).all()}
    rows = session.exec(
        select(BotUpload).where(
            col(BotUpload.bot_version_id).in_([i for i in siblings if i != me.id]),
            BotUpload.status == UploadStatus.ACTIVE,
        )
    ).all()
    for row in rows:
        other = siblings[row.bot_version_id]
        if other.version < me.version:
            if upload.keep_previous:
                continue
            row.status = UploadStatus.RETIRED
            row.reason = f"replaced by version {me.version}"
            session.add(row)
        elif not row.keep_previous:
            upload.status = UploadStatus.RETIRED
            upload.reason = f"passed validation, but version {other.version} had replaced it already"
