"""The head-to-head cross table of a tournament: how each entry did against each other one.

Every finished match counts for every pair of seats at it: the entry placed better scores 1
against the other, a shared place scores ½ each (the same shared-place rule as the standings).
A cell reads ``points/meetings`` (row against column); entries are ordered as the caller's
``ranked`` list has them (a format's own standing: Swiss points, knockout places), the rest by
their share of head-to-head points, best first.  Byes and failed matches count for nobody.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from sqlmodel import col, select

from .db import Database
from .models import Bot, BotVersion
from .tournaments import field_versions, stored_history


@dataclass(frozen=True)
class Cell:
    """The row entry's head-to-head record against the column entry."""

    points: float
    meetings: int

    @property
    def text(self) -> str:
        """``2.5/4``: points out of meetings."""
        return f"{self.points:g}/{self.meetings}"


@dataclass(frozen=True)
class CrossTable:
    """``names[i]`` against ``names[j]`` is ``cells[i][j]`` (None: never met, or i == j)."""

    names: tuple[str, ...]
    cells: tuple[tuple[Cell | None, ...], ...]
    totals: tuple[Cell, ...]  # each entry against everyone
    byes: tuple[tuple[int, str, float], ...] = ()  # (round, entry name, points), by round

    @property
    def byes_text(self) -> str:
        """``round 1: e (0.5 points); round 2: d (0.5 points)`` (a Swiss bye scores), ``round 1:
        a, b`` (a knockout's is worth nothing: the entry just goes through), ``round 1: a, b (0.5
        points each)`` (several byes in a round: once per round), or "" without byes."""
        rounds: dict[int, list[tuple[str, float]]] = {}
        for r, name, points in self.byes:
            rounds.setdefault(r, []).append((name, points))
        parts = []
        for r, got in rounds.items():
            if len({points for _, points in got}) == 1:
                each = " each" if len(got) > 1 and got[0][1] else ""
                told = ", ".join(name for name, _ in got) + _bye_points(got[0][1], each)
            else:
                told = ", ".join(f"{name}{_bye_points(points)}" for name, points in got)
            parts.append(f"round {r}: {told}")
        return "; ".join(parts)

    @property
    def empty(self) -> bool:
        """No two entries have met yet."""
        return all(t.meetings == 0 for t in self.totals)


def _bye_points(points: float, each: str = "") -> str:
    """What a bye scored, for :attr:`CrossTable.byes_text`: `` (0.5 points)``, `` (1 point)``
    (`` (0.5 points each)`` with ``each``), or nothing for a bye worth nothing."""
    if points == 0:
        return ""
    return f" ({points:g} {'point' if points == 1 else 'points'}{each})"


def entry_names(db: Database, versions: list[int]) -> list[str]:
    """The bots' names by entry (``name@N`` for a bot entered in two versions)."""
    with db.session() as session:
        rows = session.exec(
            select(BotVersion, Bot)
            .join(Bot, col(Bot.id) == col(BotVersion.bot_id))
            .where(col(BotVersion.id).in_(versions))
        ).all()
    by_id = {v.id: (b.name, v.version) for v, b in rows}
    twice = Counter(by_id[v][0] for v in versions)
    return [by_id[v][0] + (f"@{by_id[v][1]}" if twice[by_id[v][0]] > 1 else "") for v in versions]


def cross_table(db: Database, tournament_id: int, ranked: Sequence[int] = ()) -> CrossTable:
    """The tournament's cross table from its finished matches.  Entries are in the order of the
    bot versions ``ranked`` (a format's standing), then the others by head-to-head share.  A bot
    that played without being entered in the field (a tournament assembled by hand) is listed
    after the field."""
    versions = field_versions(db, tournament_id)
    matches, byes = stored_history(db, tournament_id)
    played = {v for m in matches for v in m.version_ids} | {b.version_id for b in byes}
    versions += sorted(played - set(versions))
    entry = {v: i for i, v in enumerate(versions)}
    n = len(versions)
    points = [[0.0] * n for _ in range(n)]
    meetings = [[0] * n for _ in range(n)]
    for m in matches:
        if m.placings is None:
            continue
        for (sa, va), (sb, vb) in combinations(enumerate(m.version_ids), 2):
            a, b = entry[va], entry[vb]
            pa, pb = m.placings[sa], m.placings[sb]
            share = 1.0 if pa < pb else 0.5 if pa == pb else 0.0
            points[a][b] += share
            points[b][a] += 1.0 - share
            meetings[a][b] += 1
            meetings[b][a] += 1
    totals = [Cell(sum(points[i]), sum(meetings[i])) for i in range(n)]
    names = entry_names(db, versions)
    first = {entry[v]: k for k, v in enumerate(dict.fromkeys(ranked)) if v in entry}
    order = sorted(
        range(n),
        key=lambda i: (
            first.get(i, len(first)),
            -(totals[i].points / totals[i].meetings if totals[i].meetings else 0),
            names[i],
        ),
    )
    return CrossTable(
        names=tuple(names[i] for i in order),
        cells=tuple(
            tuple(Cell(points[i][j], meetings[i][j]) if i != j and meetings[i][j] else None for j in order)
            for i in order
        ),
        totals=tuple(totals[i] for i in order),
        byes=tuple((b.round, names[entry[b.version_id]], b.points) for b in byes),
    )
