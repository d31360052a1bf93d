"""Stand-alone matches whose process was killed: told apart from those still being played.

A stand-alone match (no tournament: ``arena match``, ``arena play``, a web game, an upload's
validation) is stored ``running`` by the process that plays it, and only that process ever
records its end.  If it is killed outright (``kill -9``, the machine's OOM killer), nothing is
left to do so, and the match would stay ``running`` for good.  So :func:`claim` names the process
beside the match: where its pids mean something (the host and its pid namespace,
:func:`arena.lifecycle.process_host`), its pid and the pid's start time (so a later process
reusing the pid is not taken for it).  :func:`reap_abandoned` marks failed every running
stand-alone match whose process is gone from here, with an error that says so.  It runs whenever
a stand-alone match is stored (:func:`arena.store.tournaments.add_match`) and when ``arena
serve`` starts.  Matches owned by another host, or by another pid namespace on this one (a
container), are left alone: their processes cannot be seen from here.  So are matches stored
before revision 0008 (no owner recorded).
"""

from __future__ import annotations

import os

from sqlalchemy import delete
from sqlmodel import Session, col, select

from arena.lifecycle import ProcessRef, process_host, process_start

from .db import Database
from .models import Match, MatchOwner, MatchStatus, utcnow


def claim(session: Session, match_id: int) -> None:
    """Record, in ``session``'s transaction, that this process plays the match ``match_id``."""
    pid = os.getpid()
    session.add(MatchOwner(match_id=match_id, host=process_host(), pid=pid, pid_start=process_start(pid)))


def abandoned_detail(owner: MatchOwner) -> str:
    """The error recorded for a match whose process is gone."""
    return (
        f"abandoned: the process that played it (pid {owner.pid} on {owner.host}) ended without "
        f"recording its end (killed?); the match was not finished and counts for nothing"
    )


def reap_abandoned(db: Database) -> list[int]:
    """Mark failed every running stand-alone match whose owning process is gone from this host
    (module docstring); return their ids.  Owner rows of matches no longer running are removed,
    so the rows read here are only those of matches running now or ended since the last call."""
    host = process_host()
    reaped: list[int] = []
    with db.session() as session:
        rows = session.exec(
            select(Match, MatchOwner).join(MatchOwner, col(MatchOwner.match_id) == col(Match.id))
        ).all()  # one row per stand-alone match still owned: the running ones and those ended since
        done: list[int] = []
        for m, owner in rows:
            if m.id is None:
                continue
            if m.status != MatchStatus.RUNNING:
                done.append(m.id)
            elif owner.host == host and not ProcessRef(owner.pid, owner.pid_start).alive():
                m.status = MatchStatus.FAILED
                m.error = abandoned_detail(owner)
                m.finished_at = utcnow()
                session.add(m)
                reaped.append(m.id)
                done.append(m.id)
        if done:
            session.exec(delete(MatchOwner).where(col(MatchOwner.match_id).in_(done)))
    return reaped
