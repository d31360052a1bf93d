"""Loading and verifying stored replays (shared by the web app and ``arena replays``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlmodel import col, select

from arena.engine import Replay, ReplayError, replay
from arena.store.db import Database, DatabaseDamagedError
from arena.store.models import Replay as ReplayRow
from arena.store.tournaments import CorruptReplayError, UnknownMatchError

from .queries import MatchFilters, MatchRow, ReplayDamage, get_match, iter_match_ids, stored_replay, unpack
from .viewdata import build_view


class DamagedReplayError(CorruptReplayError):
    """A stored replay that is damaged or does not replay; ``line`` is the record line (or None)."""

    def __init__(self, match_id: int, message: str, line: int | None = None) -> None:
        self.match_id = match_id
        self.line = line
        super().__init__(message)


def replay_text(db: Database, match_id: int) -> str:
    """The checked replay text of a match.

    :class:`UnknownMatchError` when there is no such match or it has no replay yet;
    :class:`DamagedReplayError` when the stored bytes are damaged (decompression, UTF-8, sha256).
    """
    stored = stored_replay(db, match_id)
    if stored is None:
        m = get_match(db, match_id)
        if m is None:
            raise UnknownMatchError(f"no match {match_id}; see 'arena replays list'")
        why = f": {m.error}" if m.error else ""
        raise UnknownMatchError(f"match {match_id} has no replay (status {m.status}{why})")
    try:
        return unpack(stored)
    except ReplayDamage as exc:
        raise DamagedReplayError(match_id, f"the replay of match {match_id} is corrupt: {exc}") from None


def event_of_line(line: int) -> int:
    """The event number (1-based, as the viewer counts) of a record line: line 1 is the header."""
    return line - 1


def describe_replay_error(exc: ReplayError) -> str:
    """``line L (event E): reason`` (events count from 1 after the header line)."""
    if exc.line <= 1:
        return f"line {exc.line} (header): {exc.reason}" if exc.line else exc.reason
    return f"line {exc.line} (event {event_of_line(exc.line)}): {exc.reason}"


def load_view(db: Database, match_id: int) -> tuple[MatchRow, dict[str, Any]]:
    """A match and its viewer data; the errors of :func:`replay_text`, and
    :class:`DamagedReplayError` (with the line) for a stored record that does not replay."""
    text = replay_text(db, match_id)
    m = get_match(db, match_id)
    assert m is not None
    try:
        view = build_view(text, m.to_json())
    except ReplayError as exc:
        raise DamagedReplayError(
            match_id,
            f"the replay of match {match_id} does not replay: {describe_replay_error(exc)}",
            exc.line,
        ) from None
    if m.public_seed is None:  # another seat rotation of its seed is still to be played
        view["header"] = {**view["header"], "seed": "(secret while a game of this seed is on)"}
    return m, view


@dataclass(frozen=True)
class Verdict:
    """The outcome of verifying one replay."""

    label: str  # "match 17" or a file name
    ok: bool
    events: int = 0
    line: int | None = None
    reason: str = ""
    summary: str = ""  # for a good replay: its result

    @property
    def event(self) -> int | None:
        """The event number where the replay breaks (None: not at an event)."""
        return None if self.line is None or self.line <= 1 else event_of_line(self.line)

    def message(self) -> str:
        """One line: ``OK match 3: 248 events ...`` or ``FAIL match 3: line 57 (event 56): ...``."""
        if self.ok:
            return f"OK   {self.label}: {self.events} events replay exactly; {self.summary}"
        return f"FAIL {self.label}: {self.reason}"


def _verify(text: str, label: str) -> tuple[Verdict, Replay | None]:
    try:
        rep = replay(text)
    except ReplayError as exc:
        return Verdict(label, False, line=exc.line, reason=describe_replay_error(exc)), None
    res = rep.result
    summary = f"scores {res.get('scores')}, placings {res.get('placings')}, {res.get('termination')}"
    return Verdict(label, True, events=len(rep.events), summary=summary), rep


def verify_text(text: str, label: str) -> Verdict:
    """Re-simulate a record through the engine (every throw checked against the dice stream)."""
    return _verify(text, label)[0]


def verify_match(db: Database, match_id: int) -> Verdict:
    """Check a stored replay: its bytes against the stored sha256, then every event through the
    engine, then the result line against the match's seats in the database.  Damaged database
    pages under the match's rows make a FAIL verdict naming the match, not an exception."""
    try:
        return _verify_match(db, match_id)
    except DatabaseDamagedError as exc:
        return Verdict(
            f"match {match_id}", False, reason=f"its rows in the database are damaged ({exc.detail})"
        )


def _replay_ids(db: Database, after: int, chunk: int = 500) -> Iterator[int]:
    """The match ids of the ``replay`` table above ``after``, ascending (keyset paging)."""
    while True:
        with db.session() as session:
            ids = list(
                session.exec(
                    select(ReplayRow.match_id)
                    .where(col(ReplayRow.match_id) > after)
                    .order_by(col(ReplayRow.match_id))
                    .limit(chunk)
                ).all()
            )
        yield from ids
        if len(ids) < chunk:
            return
        after = ids[-1]


def verify_stored(db: Database, filters: MatchFilters) -> Iterator[Verdict]:
    """:func:`verify_match` for every match ``filters`` select, oldest first, carrying on over
    damage: a match whose rows cannot be read is a FAIL naming it; when the list of matches
    itself cannot be read further, the ids are taken from the replays table instead (without
    filters), and when that fails too, a last FAIL says after which match listing stopped."""
    last = 0
    ids = iter_match_ids(db, filters)
    while True:
        try:
            mid = next(ids)
        except StopIteration:
            return
        except DatabaseDamagedError as exc:
            damage = exc
            break
        last = mid
        yield verify_match(db, mid)
    if filters == MatchFilters():
        replay_ids = _replay_ids(db, last)
        while True:
            try:
                mid = next(replay_ids)
            except StopIteration:
                return
            except DatabaseDamagedError as exc:
                damage = exc
                break
            last = mid
            yield verify_match(db, mid)
    yield Verdict(
        "match list",
        False,
        reason=f"the matches after match {last} cannot be listed: the database is damaged ({damage.detail})",
    )


def _verify_match(db: Database, match_id: int) -> Verdict:
    label = f"match {match_id}"
    stored = stored_replay(db, match_id)
    if stored is None:
        m = get_match(db, match_id)
        why = f"no such match in {db.where}" if m is None else f"no replay stored (status {m.status})"
        return Verdict(label, False, reason=why)
    try:
        text = unpack(stored)
    except ReplayDamage as exc:
        return Verdict(label, False, reason=f"stored replay damaged ({exc.kind}): {exc}")
    verdict, rep = _verify(text, label)
    if rep is None:
        return verdict
    m = get_match(db, match_id)
    if m is not None and m.seats:
        db_scores = [s.score for s in m.seats]
        db_placings = [s.placing for s in m.seats]
        if db_scores != rep.result.get("scores") or db_placings != rep.result.get("placings"):
            n = len(rep.events) + 2
            return Verdict(
                label,
                False,
                events=len(rep.events),
                line=n,
                reason=(
                    f"line {n} (result): the database has scores {db_scores}, placings {db_placings}, "
                    f"the replay {rep.result.get('scores')}, {rep.result.get('placings')}"
                ),
            )
    return verdict
