"""One coordinator per tournament at a time: a lease row with a heartbeat.

A coordinator (``arena tournament start/resume/run``, local or on a Dask cluster) takes the
tournament's lease before it touches the queue and gives it back when it ends.  While it holds the
lease a heartbeat thread pushes its expiry ahead (every :data:`HEARTBEAT` seconds, by :data:`TTL`).
A second coordinator finds the lease held and is told who holds it (:class:`LeaseHeldError`), or
waits for it (``wait=True``).  A lease is taken over when its holder is dead: its expiry passed
(a coordinator on another host that died), or its holder ran on this host and that process is
gone (its pid no longer runs, or runs another program since).

Times come from the database server on PostgreSQL (one clock for every host) and from this host
on SQLite (a file every coordinator reaches locally).  Taking the lease is one transaction: the
row is locked (``SELECT ... FOR UPDATE``; SQLite's ``BEGIN IMMEDIATE`` serialises writers) and two
coordinators inserting it at once collide on its primary key, the loser reading it again.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, text, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, col, select

from arena.lifecycle import ProcessRef, process_host, process_start

from .db import Database, StoreError
from .models import CoordinatorLease, utcnow
from .retry import failure_line

TTL = 30.0
"""Seconds a lease stays valid after its last heartbeat."""
HEARTBEAT = 5.0
"""Seconds between heartbeats."""
WAIT_POLL = 1.0
"""Seconds between attempts while waiting for a lease (``wait=True``)."""

log = logging.getLogger(__name__)


def go_on_command(tournament_id: int, again: str | None = None) -> str:
    """The command that goes on with the tournament: ``again`` when its coordinator is not
    ``arena tournament`` (the ladder's is ``arena ladder run``: ``tournament resume`` refuses a
    ladder), else ``arena tournament resume ID``."""
    return again or f"arena tournament resume {tournament_id}"


class LeaseHeldError(StoreError):
    """Another live coordinator holds the tournament's lease."""

    def __init__(self, tournament_id: int, holder: LeaseHolder, again: str | None = None) -> None:
        wait = (
            f"Wait for it with 'arena tournament resume {tournament_id} --wait'"
            if again is None
            else f"Run '{again}' again once it has ended"
        )
        super().__init__(
            f"tournament {tournament_id} is being run by another coordinator: {holder.describe()}. "
            f"{wait}, or stop that process first (its lease is taken over once it is gone from this "
            f"host or {TTL:.0f} s after its last heartbeat)."
        )
        self.tournament_id = tournament_id
        self.holder = holder


class LeaseLostError(StoreError):
    """This coordinator's lease was taken over (its heartbeats stopped for too long)."""


def _aware(dt: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored as UTC): make them timezone-aware."""
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a lease, as read from its row."""

    host: str
    pid: int
    pid_start: int | None
    acquired_at: datetime
    heartbeat_at: datetime
    expires_at: datetime
    now: datetime  # the clock the row was judged by, when it was read

    @classmethod
    def of(cls, row: CoordinatorLease, now: datetime) -> LeaseHolder:
        return cls(
            row.host,
            row.pid,
            row.pid_start,
            _aware(row.acquired_at),
            _aware(row.heartbeat_at),
            _aware(row.expires_at),
            now,
        )

    def describe(self) -> str:
        """``pid 1234 on host h (since 2026-12-01 10:00:00 UTC, last heartbeat 2 s ago)``."""
        ago = max(0.0, (self.now - self.heartbeat_at).total_seconds())
        return (
            f"pid {self.pid} on host {self.host} (since {self.acquired_at:%Y-%m-%d %H:%M:%S} UTC, "
            f"last heartbeat {ago:.0f} s ago)"
        )

    def expired(self) -> bool:
        """Whether the holder missed its heartbeats for longer than the lease lasts."""
        return self.now >= self.expires_at

    def gone_from(self, host: str) -> bool:
        """Whether the holder ran on ``host`` (this one) and that process no longer runs."""
        return self.host == host and not ProcessRef(self.pid, self.pid_start).alive()

    def live(self) -> bool:
        """Whether the holder still coordinates: its lease has not expired and, when it ran on
        this host, its process still runs (the rule by which a new coordinator would take the
        lease over)."""
        return not (self.expired() or self.gone_from(process_host()))


def _now(session: Session) -> datetime:
    """The lease clock: the database server's on PostgreSQL, this host's on SQLite."""
    bind = session.get_bind()
    if bind.dialect.name == "postgresql":
        value = session.connection().execute(text("SELECT clock_timestamp()")).scalar_one()
        if isinstance(value, datetime):
            return _aware(value)
    return utcnow()


class Lease:
    """The lease of one tournament for this process (see the module's documentation)."""

    def __init__(
        self,
        db: Database,
        tournament_id: int,
        *,
        ttl: float = TTL,
        heartbeat: float = HEARTBEAT,
        again: str | None = None,
    ) -> None:
        self.db = db
        self.tournament_id = tournament_id
        self.again = again  # the command that goes on with it (go_on_command)
        self.ttl = ttl
        self.heartbeat = heartbeat
        self.token = secrets.token_hex(16)
        self.host = process_host()
        self.pid = os.getpid()
        self.pid_start = process_start(self.pid)
        self.held = False
        self.lost: str | None = None  # why the lease was lost, once it was
        self.takeover: LeaseHolder | None = None  # the dead holder this one replaced, if any
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- taking it

    def try_acquire(self) -> LeaseHolder | None:
        """Take the lease if it is free, ours or its holder is dead; else return its holder."""
        for _ in range(5):
            try:
                return self._try_acquire()
            except IntegrityError:  # another coordinator inserted the row first: read it again
                continue
        raise StoreError(f"could not take the lease of tournament {self.tournament_id}: it keeps changing")

    def _try_acquire(self) -> LeaseHolder | None:
        with self.db.session() as session:
            now = _now(session)
            row = session.get(CoordinatorLease, self.tournament_id, with_for_update=True)
            expires = now + timedelta(seconds=self.ttl)
            if row is None:
                session.add(
                    CoordinatorLease(
                        tournament_id=self.tournament_id,
                        token=self.token,
                        host=self.host,
                        pid=self.pid,
                        pid_start=self.pid_start,
                        acquired_at=now,
                        heartbeat_at=now,
                        expires_at=expires,
                    )
                )
                session.flush()
                self.held = True
                return None
            holder = LeaseHolder.of(row, now)
            if row.token != self.token and not (holder.expired() or holder.gone_from(self.host)):
                return holder
            if row.token != self.token:
                self.takeover = holder
                log.info("tournament %s: taking over the lease of %s", self.tournament_id, holder.describe())
            row.token, row.host, row.pid, row.pid_start = self.token, self.host, self.pid, self.pid_start
            row.acquired_at, row.heartbeat_at, row.expires_at = now, now, expires
            session.add(row)
            self.held = True
            return None

    def acquire(
        self,
        *,
        wait: bool = False,
        on_wait: Callable[[LeaseHolder], None] | None = None,
        poll: float = WAIT_POLL,
    ) -> None:
        """Take the lease and start the heartbeat.  A lease held by a live coordinator raises
        :class:`LeaseHeldError`, or with ``wait`` is waited for (``on_wait(holder)`` is called
        once, when the waiting starts)."""
        told = False
        while True:
            holder = self.try_acquire()
            if holder is None:
                break
            if not wait:
                raise LeaseHeldError(self.tournament_id, holder, self.again)
            if not told and on_wait is not None:
                on_wait(holder)
            told = True
            time.sleep(poll)
        self.lost = None
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name="arena-lease-heartbeat", daemon=True)
        self._thread.start()

    # ----------------------------------------------------------------- keeping it

    def renew(self) -> bool:
        """Push the expiry ahead; False (and :attr:`lost` set) when the lease is no longer ours."""
        with self.db.session() as session:
            now = _now(session)
            done = session.connection().execute(
                update(CoordinatorLease)
                .where(
                    col(CoordinatorLease.tournament_id) == self.tournament_id,
                    col(CoordinatorLease.token) == self.token,
                )
                .values(heartbeat_at=now, expires_at=now + timedelta(seconds=self.ttl))
            )
            if done.rowcount == 0:
                holder = session.get(CoordinatorLease, self.tournament_id)
                who = LeaseHolder.of(holder, now).describe() if holder is not None else "nobody"
                self.lost = f"the lease of tournament {self.tournament_id} was taken over by {who}"
                self.held = False
                return False
        return True

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat):
            try:
                if not self.renew():
                    log.error("%s", self.lost)
                    return
            except SQLAlchemyError as exc:  # the database is away: try again at the next beat
                # one line (the driver's first): SQLAlchemy's text adds the SQL and a link
                log.warning(
                    "tournament %s: lease heartbeat failed: %s", self.tournament_id, failure_line(exc)
                )

    def check(self) -> None:
        """Raise :class:`LeaseLostError` if the lease was lost (to be called by the holder's loop)."""
        if self.lost is not None:
            raise LeaseLostError(
                f"{self.lost}, so this coordinator stops (its heartbeats lapsed for {self.ttl:.0f} s). "
                f"Nothing partial was recorded; '{go_on_command(self.tournament_id, self.again)}' continues."
            )

    # ----------------------------------------------------------------- giving it back

    def release(self) -> None:
        """Stop the heartbeat and delete the lease if it is still ours (never raises)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        self._thread = None
        if not self.held:
            return
        self.held = False
        try:
            with self.db.session() as session:
                session.connection().execute(
                    delete(CoordinatorLease).where(
                        col(CoordinatorLease.tournament_id) == self.tournament_id,
                        col(CoordinatorLease.token) == self.token,
                    )
                )
        except SQLAlchemyError as exc:  # it expires by itself, or is taken over as ours was gone
            log.warning(
                "tournament %s: could not release the lease: %s", self.tournament_id, failure_line(exc)
            )


@contextmanager
def coordinator_lease(
    db: Database,
    tournament_id: int,
    *,
    wait: bool = False,
    on_wait: Callable[[LeaseHolder], None] | None = None,
    again: str | None = None,
) -> Iterator[Lease]:
    """Hold the tournament's lease for the block (see :meth:`Lease.acquire`); released after it,
    whatever happens.  ``again``: the command that goes on with the tournament, for messages
    (:func:`go_on_command`)."""
    lease = Lease(db, tournament_id, again=again)
    lease.acquire(wait=wait, on_wait=on_wait)
    try:
        yield lease
    finally:
        lease.release()


def coordinated_in(session: Session, tournament_ids: Sequence[int]) -> set[int]:
    """Those of ``tournament_ids`` that a live coordinator runs now (:meth:`LeaseHolder.live`)."""
    if not tournament_ids:
        return set()
    rows = session.exec(
        select(CoordinatorLease).where(col(CoordinatorLease.tournament_id).in_(list(tournament_ids)))
    ).all()
    now = _now(session)
    return {row.tournament_id for row in rows if LeaseHolder.of(row, now).live()}


def coordinated(db: Database, tournament_ids: Sequence[int]) -> set[int]:
    """:func:`coordinated_in` in a session of its own."""
    with db.session() as session:
        return coordinated_in(session, tournament_ids)


def shown_status(status: str, is_coordinated: bool) -> str:
    """A tournament's status as listings show it: a ``running`` tournament that no live
    coordinator runs (Ctrl-C, a crash, a killed process) is ``interrupted`` (``arena tournament
    resume`` finishes it); every other status as stored."""
    return "interrupted" if status == "running" and not is_coordinated else status


def lease_holder(db: Database, tournament_id: int) -> LeaseHolder | None:
    """Who holds the tournament's lease now (None: nobody), for display."""
    with db.session() as session:
        row = session.get(CoordinatorLease, tournament_id)
        return LeaseHolder.of(row, _now(session)) if row is not None else None
