"""Read-only database queries for the web app and ``arena replays``: paged, indexed, never "load all".

Every list is one filtered ``COUNT`` plus one ``LIMIT/OFFSET`` query over the indexed columns of
``match`` (``status``, ``finished_at``, ``tournament_id``, ``termination``) and one query for the
seats of the matches on the page, so a page costs the same with 100 or 100,000 matches.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, false, func, or_
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from arena.endings import is_forfeit, known_terminations, match_label
from arena.engine.variants import rules_label
from arena.safetext import small_int
from arena.store.db import Database, StoreError
from arena.store.errors import AdvisedError
from arena.store.lease import coordinated_in, shown_status
from arena.store.models import (
    Bot,
    BotVersion,
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    Tournament,
    TournamentEntry,
)
from arena.store.tournaments import time_control_text

T = TypeVar("T")

MAX_PER_PAGE = 500
STATUSES = (MatchStatus.QUEUED, MatchStatus.RUNNING, MatchStatus.FINISHED, MatchStatus.FAILED)


class FilterError(AdvisedError, ValueError):
    """A filter that cannot be applied (unknown bot, bad date, bad page); a web page shows its
    ``fact``, the CLI the whole message."""


@dataclass(frozen=True)
class MatchFilters:
    """What a match list may be narrowed to.  ``status=None`` means every status."""

    tournament: int | None = None
    bot: str | None = None  # NAME (every version) or NAME@N
    termination: str | None = None  # the match's (normal, round-cap, forfeit) or a seat's (timeout, ...)
    status: str | None = MatchStatus.FINISHED
    since: date | None = None  # finished on or after this day (UTC)
    until: date | None = None  # finished on or before this day (UTC)

    def query_args(self) -> dict[str, str]:
        """The filters as URL query parameters (only those set)."""
        out: dict[str, str] = {}
        if self.tournament is not None:
            out["tournament"] = str(self.tournament)
        if self.bot:
            out["bot"] = self.bot
        if self.termination:
            out["termination"] = self.termination
        if self.status != MatchStatus.FINISHED:
            out["status"] = self.status or "all"
        if self.since is not None:
            out["since"] = self.since.isoformat()
        if self.until is not None:
            out["until"] = self.until.isoformat()
        return out


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a longer list."""

    items: list[T]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        """How many pages there are (at least 1)."""
        return max(1, -(-self.total // self.per_page))

    @property
    def first(self) -> int:
        """1-based position of the first item on this page (0 when empty)."""
        return (self.page - 1) * self.per_page + 1 if self.items else 0

    @property
    def last(self) -> int:
        """1-based position of the last item on this page (0 when empty: a page past the end
        showed "0–4999900 of 3")."""
        return (self.page - 1) * self.per_page + len(self.items) if self.items else 0


@dataclass(frozen=True)
class SeatRow:
    """One seat of a match as lists show it."""

    seat: int
    bot: str
    bot_version_id: int
    score: int | None
    placing: int | None
    termination: str | None
    detail: str | None
    think_total: float | None
    think_max: float | None
    decisions: int | None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "seat": self.seat,
            "bot": self.bot,
            "bot_version_id": self.bot_version_id,
            "score": self.score,
            "placing": self.placing,
            "termination": self.termination,
            "detail": self.detail,
            "think_total": self.think_total,
            "think_max": self.think_max,
            "decisions": self.decisions,
        }


@dataclass(frozen=True)
class MatchRow:
    """A match with its tournament's name and its seats."""

    id: int
    tournament_id: int | None
    tournament: str | None
    ordinal: int
    seed: int
    group_key: str
    status: str
    termination: str | None
    finished_at: datetime | None
    duration: float | None
    error: str | None
    seats: list[SeatRow] = field(default_factory=list)
    dice_public: bool = True  # False while this match or another of its seed may still be played

    @property
    def public_seed(self) -> str | None:
        """The seed for the public (decimal text), or None while it is secret: the seed tells
        every throw (R5), so it stays hidden until this match and every other match of the same
        seed (its duplicate group's seat rotations) are over (:func:`open_seeds`)."""
        return str(self.seed) if self.dice_public else None

    @property
    def forfeited(self) -> list[SeatRow]:
        """Seats that ended in a forfeit."""
        return [s for s in self.seats if is_forfeit(s.termination)]

    @property
    def ending(self) -> str:
        """How the match ended in the words the tables show (``arena replays list`` too):
        ``finished``, ``round cap``, or who forfeited (``rb forfeited (crashed)``); empty while
        it has no ending."""
        if self.termination is None:
            return ""
        return match_label(self.termination, [(s.bot, s.termination or "") for s in self.forfeited])

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "id": self.id,
            "tournament_id": self.tournament_id,
            "tournament": self.tournament,
            "ordinal": self.ordinal,
            "seed": self.public_seed,  # 64-bit: a string, exact in JavaScript; None while secret
            "group": self.group_key,
            "status": self.status,
            "termination": self.termination,
            "finished_at": iso(self.finished_at),
            "duration": self.duration,
            "error": self.error,
            "seats": [s.to_json() for s in self.seats],
        }


@dataclass(frozen=True)
class TournamentRow:
    """A tournament with its matches counted by status."""

    id: int
    name: str
    format: str
    table_sizes: str
    games: int
    seed: int
    move_time: float
    bank: float
    status: str
    created_at: datetime
    finished_at: datetime | None
    counts: dict[str, int]
    bots: list[str] = field(default_factory=list)
    rules: str = "1"  # the rules version id its matches are played under
    cpu_clock: bool = False  # the clock charges CPU time, not wall-clock time
    time_control: str = ""  # for people: ``1s + 10s bank`` or ``1s CPU + 10s CPU bank``

    @property
    def public_seed(self) -> str | None:
        """The tournament seed for the public, or None until the tournament is finished: every
        match seed follows from it, so it would tell the dice of the matches still to come."""
        return str(self.seed) if self.status == "finished" else None

    @property
    def rules_label(self) -> str:
        """``sprint (sprint-1)``: the rules variant and version, for people."""
        return rules_label(self.rules)

    @property
    def total(self) -> int:
        """Matches scheduled."""
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "id": self.id,
            "name": self.name,
            "format": self.format,
            "table_sizes": self.table_sizes,
            "games": self.games,
            "seed": self.public_seed,  # 64-bit: a string, exact in JavaScript; None while secret
            "move_time": self.move_time,
            "bank": self.bank,
            "cpu_clock": self.cpu_clock,
            "time_control": self.time_control,
            "status": self.status,
            "created_at": iso(self.created_at),
            "finished_at": iso(self.finished_at),
            "matches": self.counts,
            "bots": self.bots,
            "rules": self.rules,
        }


def iso(value: datetime | None) -> str | None:
    """A stored (UTC) time as ISO 8601 text, seconds precision."""
    return None if value is None else value.replace(microsecond=0).isoformat()


def parse_day(text: str | None, what: str) -> date | None:
    """``YYYY-MM-DD`` (empty: none); :class:`FilterError` naming ``what`` otherwise."""
    if text is None or not text.strip():
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise FilterError(f"{what} must be a date like 2025-01-31, got {text!r}") from None


def check_page(page: int, per_page: int) -> None:
    """:class:`FilterError` for a page below 1 or a page size outside 1..500."""
    if page < 1:
        raise FilterError(f"page must be 1 or more, got {page}")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise FilterError(f"per-page must be 1..{MAX_PER_PAGE}, got {per_page}")


def _version_ids(session: Session, ref: str) -> list[int]:
    name, _, ver = ref.partition("@")
    query = select(BotVersion.id).join(Bot, col(Bot.id) == col(BotVersion.bot_id)).where(Bot.name == name)
    if ver:
        number = small_int(ver)
        if number is None:
            raise FilterError(f"bad version in {ref!r}: use NAME or NAME@N")
        query = query.where(BotVersion.version == number)
    ids = [i for i in session.exec(query).all() if i is not None]
    if not ids:
        raise FilterError(f"no bot {ref!r}", "see 'arena bots list'")
    return ids


def _conditions(session: Session, f: MatchFilters) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = []
    if f.status is not None:
        if f.status not in STATUSES:
            raise FilterError(f"status must be one of {', '.join(STATUSES)} or all, got {f.status!r}")
        conds.append(col(Match.status) == f.status)
    if f.tournament is not None:
        if -(2**63) <= f.tournament < 2**63:
            conds.append(col(Match.tournament_id) == f.tournament)
        else:  # no tournament has it (binding it was an OverflowError): nothing, as for an unknown id
            conds.append(false())
    if f.bot:
        ids = _version_ids(session, f.bot)
        # IN (uncorrelated subquery): SQLite builds the set once from the bot_version_id index;
        # a correlated EXISTS scans that index once per match (seconds with 10,000 matches)
        conds.append(
            col(Match.id).in_(select(MatchSeat.match_id).where(col(MatchSeat.bot_version_id).in_(ids)))
        )
    if f.termination:
        seat_terms = select(MatchSeat.match_id).where(col(MatchSeat.termination) == f.termination)
        conds.append(or_(col(Match.termination) == f.termination, col(Match.id).in_(seat_terms)))
    if f.since is not None:
        conds.append(col(Match.finished_at) >= datetime.combine(f.since, time(), tzinfo=UTC))
    if f.until is not None and f.until < date.max:  # the last day there is: no day after it
        conds.append(
            col(Match.finished_at) < datetime.combine(f.until + timedelta(days=1), time(), tzinfo=UTC)
        )
    return conds


def _names(session: Session, ids: set[int]) -> dict[int, str]:
    """Display names by version id: ``name``, or ``name@N`` when the bot has several versions."""
    if not ids:
        return {}
    rows = session.exec(
        select(BotVersion.id, BotVersion.version, Bot.id, Bot.name)
        .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
        .where(col(BotVersion.id).in_(ids))
    ).all()
    bot_ids = {r[2] for r in rows}
    counts = dict(
        session.exec(
            select(BotVersion.bot_id, func.count())
            .where(col(BotVersion.bot_id).in_(bot_ids))
            .group_by(col(BotVersion.bot_id))
        ).all()
    )
    out = {}
    for vid, version, bid, name in rows:
        if vid is not None and bid is not None:
            out[vid] = name if counts.get(bid, 1) == 1 else f"{name}@{version}"
    return out


def _seats(session: Session, match_ids: list[int]) -> dict[int, list[SeatRow]]:
    if not match_ids:
        return {}
    raw = session.execute(
        sa_select(
            col(MatchSeat.match_id),
            col(MatchSeat.seat),
            col(MatchSeat.bot_version_id),
            col(MatchSeat.score),
            col(MatchSeat.placing),
            col(MatchSeat.termination),
            col(MatchSeat.detail),
            col(MatchSeat.think_total),
            col(MatchSeat.think_max),
            col(MatchSeat.decisions),
        )
        .where(col(MatchSeat.match_id).in_(match_ids))
        .order_by(col(MatchSeat.match_id), col(MatchSeat.seat))
    ).all()
    names = _names(session, {r[2] for r in raw})
    out: dict[int, list[SeatRow]] = {}
    for mid, seat, vid, score, placing, term, detail, think_total, think_max, decisions in raw:
        out.setdefault(mid, []).append(
            SeatRow(
                seat,
                names.get(vid, f"version {vid}"),
                vid,
                score,
                placing,
                term,
                detail,
                think_total,
                think_max,
                decisions,
            )
        )
    return out


OVER = (MatchStatus.FINISHED, MatchStatus.FAILED)


def open_seeds(session: Session, seeds: Iterable[int]) -> set[int]:
    """Those of ``seeds`` that a queued or running match still plays: their dice are not public
    yet (an earlier seat rotation's replay would show the throws of a later one)."""
    wanted = set(seeds)
    if not wanted:
        return set()
    found = session.exec(
        select(Match.seed)
        .where(col(Match.status).in_((MatchStatus.QUEUED, MatchStatus.RUNNING)), col(Match.seed).in_(wanted))
        .distinct()
    ).all()
    return set(found)


def seed_secret(db: Database, match_id: int) -> bool:
    """Whether the seed of match ``match_id`` is still secret (:attr:`MatchRow.public_seed`)."""
    with db.session() as session:
        m = session.get(Match, match_id)
        if m is None:
            return False
        return not _dice_public(m, open_seeds(session, (m.seed,)))


def _dice_public(m: Match, still_played: set[int]) -> bool:
    """Whether match ``m``'s dice are public: it is over, and no match of its seed is still to
    be played (``still_played``: :func:`open_seeds`)."""
    return m.status in OVER and m.seed not in still_played


def _rows(session: Session, matches: list[tuple[Match, str | None]]) -> list[MatchRow]:
    seats = _seats(session, [m.id for m, _ in matches if m.id is not None])
    still_played = open_seeds(session, (m.seed for m, _ in matches))
    out = []
    for m, tname in matches:
        assert m.id is not None
        out.append(
            MatchRow(
                m.id,
                m.tournament_id,
                tname,
                m.ordinal,
                m.seed,
                m.group_key,
                m.status,
                m.termination,
                m.finished_at,
                m.duration,
                m.error,
                seats.get(m.id, []),
                dice_public=_dice_public(m, still_played),
            )
        )
    return out


def list_matches(db: Database, filters: MatchFilters, *, page: int = 1, per_page: int = 50) -> Page[MatchRow]:
    """One page of matches: those not finished (running, queued: no finish time) first, then
    the newest finished (then by id, newest first).  The unfinished came last on SQLite and first
    on PostgreSQL (where NULL sorts high), so a running match was on the last page of one.  A page
    past the last one has no rows (and the total), however large its number."""
    check_page(page, per_page)
    with db.session() as session:
        conds = _conditions(session, filters)
        total = int(session.exec(select(func.count()).select_from(Match).where(*conds)).one())
        if (page - 1) * per_page >= total:  # past the end: no query (an offset past 2**63 overflows)
            return Page([], page, per_page, total)
        rows = session.exec(
            select(Match, Tournament.name)
            .outerjoin(Tournament, col(Tournament.id) == col(Match.tournament_id))
            .where(*conds)
            .order_by(col(Match.finished_at).desc().nulls_first(), col(Match.id).desc())
            .limit(per_page)
            .offset((page - 1) * per_page)
        ).all()
        return Page(_rows(session, [(m, n) for m, n in rows]), page, per_page, total)


def iter_match_ids(db: Database, filters: MatchFilters, *, chunk: int = 500) -> Iterator[int]:
    """Every matching match id, oldest first, read ``chunk`` ids at a time (keyset paging)."""
    last = 0
    while True:
        with db.session() as session:
            conds = _conditions(session, filters)
            ids = [
                i
                for i in session.exec(
                    select(Match.id).where(*conds, col(Match.id) > last).order_by(col(Match.id)).limit(chunk)
                ).all()
                if i is not None
            ]
        yield from ids
        if len(ids) < chunk:
            return
        last = ids[-1]


def get_match(db: Database, match_id: int) -> MatchRow | None:
    """One match with its seats, or ``None``."""
    with db.session() as session:
        row = session.exec(
            select(Match, Tournament.name)
            .outerjoin(Tournament, col(Tournament.id) == col(Match.tournament_id))
            .where(col(Match.id) == match_id)
        ).first()
        if row is None:
            return None
        return _rows(session, [(row[0], row[1])])[0]


def _counts(session: Session, ids: list[int]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {i: {} for i in ids}
    if not ids:
        return out
    for tid, status, n in session.exec(
        select(Match.tournament_id, Match.status, func.count())
        .where(col(Match.tournament_id).in_(ids))
        .group_by(col(Match.tournament_id), col(Match.status))
    ).all():
        if tid is not None:
            out[tid][status] = int(n)
    return out


def _tournament_row(t: Tournament, counts: dict[str, int], bots: list[str], live: set[int]) -> TournamentRow:
    """The row of ``t``; its status ``interrupted`` when it is running and its id is not in
    ``live`` (the tournaments a live coordinator runs: :func:`arena.store.lease.shown_status`)."""
    assert t.id is not None
    return TournamentRow(
        t.id,
        t.name,
        t.format,
        t.table_sizes,
        t.games,
        t.seed,
        t.move_time,
        t.bank,
        shown_status(t.status, t.id in live),
        t.created_at,
        t.finished_at,
        counts,
        bots,
        rules=t.rules or "1",
        cpu_clock=bool(t.cpu_clock),
        time_control=time_control_text(t),
    )


def list_tournaments(db: Database, *, page: int = 1, per_page: int = 50) -> Page[TournamentRow]:
    """One page of tournaments, newest first, with their matches counted by status (a page past the
    last one: none, with the total)."""
    check_page(page, per_page)
    with db.session() as session:
        total = int(session.exec(select(func.count()).select_from(Tournament)).one())
        if (page - 1) * per_page >= total:  # past the end: no query (an offset past 2**63 overflows)
            return Page([], page, per_page, total)
        ts = session.exec(
            select(Tournament)
            .order_by(col(Tournament.id).desc())
            .limit(per_page)
            .offset((page - 1) * per_page)
        ).all()
        ids = [t.id for t in ts if t.id is not None]
        counts = _counts(session, ids)
        live = coordinated_in(session, [t.id for t in ts if t.id is not None and t.status == "running"])
        return Page([_tournament_row(t, counts[t.id or 0], [], live) for t in ts], page, per_page, total)


def get_tournament(db: Database, tournament_id: int) -> TournamentRow | None:
    """One tournament with its counts and its field (bot display names), or ``None``."""
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        if t is None:
            return None
        vids = set(
            session.exec(
                select(TournamentEntry.bot_version_id).where(TournamentEntry.tournament_id == tournament_id)
            ).all()
        )
        names = _names(session, vids)
        live = coordinated_in(session, [tournament_id] if t.status == "running" else [])
        counts = _counts(session, [tournament_id])[tournament_id]
        return _tournament_row(t, counts, sorted(names.values()), live)


def bot_names(db: Database) -> list[str]:
    """Every bot name (removed ones too: their matches stay), for filter choices, in code point
    order on every backend (PostgreSQL's ORDER BY follows the database's collation)."""
    with db.session() as session:
        return sorted(session.exec(select(Bot.name)).all())


def terminations(db: Database) -> list[str]:
    """The termination values that occur (matches' and seats'), for filter choices: in the
    vocabulary's order (the match's endings, then the forfeit reasons), any unknown one last."""
    with db.session() as session:
        match_terms = session.exec(
            select(Match.termination).where(col(Match.termination).is_not(None)).distinct()
        ).all()
        seat_terms = session.exec(
            select(MatchSeat.termination).where(col(MatchSeat.termination).is_not(None)).distinct()
        ).all()
    order = {t: k for k, t in enumerate(known_terminations())}
    return sorted({t for t in (*match_terms, *seat_terms) if t}, key=lambda t: (order.get(t, len(order)), t))


def results_key(db: Database, tournament_id: int | None) -> tuple[int, int, tuple[int, ...]]:
    """(finished matches, highest finished id, ids of the removed bots): changes whenever a result
    is added, and whenever a bot is removed or brought back, which hides or shows it on the
    all-matches leaderboard and marks it in a tournament's (cache key)."""
    with db.session() as session:
        query = select(func.count(), func.max(Match.id)).where(col(Match.status) == MatchStatus.FINISHED)
        if tournament_id is not None:
            query = query.where(col(Match.tournament_id) == tournament_id)
        n, top = session.exec(query).one()
        removed = session.exec(select(Bot.id).where(col(Bot.removed_at).is_not(None)).order_by(col(Bot.id)))
        return int(n or 0), int(top or 0), tuple(int(b) for b in removed.all() if b is not None)


@dataclass(frozen=True)
class StoredReplay:
    """A replay row as stored: its bytes, their stored hash and size."""

    match_id: int
    sha256: str
    size: int
    data: bytes


def replay_info(db: Database, match_id: int) -> tuple[str, int] | None:
    """(stored sha256, size) of a match's replay without reading its bytes, or ``None``."""
    with db.session() as session:
        row = session.exec(select(Replay.sha256, Replay.size).where(col(Replay.match_id) == match_id)).first()
        return None if row is None else (row[0], int(row[1]))


def stored_replay(db: Database, match_id: int) -> StoredReplay | None:
    """The raw replay row of a match, or ``None``."""
    with db.session() as session:
        r = session.get(Replay, match_id)
        if r is None:
            return None
        return StoredReplay(r.match_id, r.sha256, r.size, bytes(r.data))


class ReplayDamage(StoreError):
    """A stored replay whose bytes are damaged: ``kind`` is ``decompress``, ``utf-8`` or ``sha256``."""

    def __init__(self, match_id: int, kind: str, message: str) -> None:
        self.match_id = match_id
        self.kind = kind
        super().__init__(message)


def unpack(stored: StoredReplay) -> str:
    """The replay text of a stored row, checked like ``load_replay`` but saying exactly what broke."""
    mid = stored.match_id
    try:
        raw = zlib.decompress(stored.data)
    except zlib.error as exc:
        raise ReplayDamage(mid, "decompress", f"the stored bytes do not decompress (zlib: {exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayDamage(
            mid, "utf-8", f"the stored text is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != stored.sha256:
        raise ReplayDamage(
            mid,
            "sha256",
            f"sha256 of the content is {digest[:16]}…, the stored hash is {stored.sha256[:16]}… "
            "(damaged in storage)",
        )
    return text
