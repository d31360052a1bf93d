"""What a bot's charts show, read with bounded queries (fast with 100,000 stored matches).

- :func:`version_results`: a version's last :data:`RECENT` finished matches (any tournament):
  seat, table size, placing, score and day; the score distribution, results by seat and games
  per day are computed from them;
- :func:`head_to_head`: the top ladder bots against each other over the ladder's last
  :data:`H2H_WINDOW` finished matches (the share of meetings the row finished ahead).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import text

from arena.store.db import Database

RECENT = 1000
H2H_WINDOW = 3000


@dataclass(frozen=True)
class SeatResult:
    """One finished match of a version."""

    match_id: int
    seat: int
    players: int
    placing: int
    score: int
    day: date | None


def version_results(db: Database, version_id: int, limit: int = RECENT) -> list[SeatResult]:
    """The version's last ``limit`` finished matches, newest first."""
    query = text(
        "SELECT ms.match_id, ms.seat, ms.placing, ms.score, m.finished_at, "
        "(SELECT COUNT(*) FROM matchseat s2 WHERE s2.match_id = ms.match_id) AS players "
        'FROM matchseat ms JOIN "match" m ON m.id = ms.match_id '
        "WHERE ms.bot_version_id = :v AND m.status = 'finished' AND ms.placing IS NOT NULL "
        "ORDER BY ms.match_id DESC LIMIT :n"
    )
    with db.engine.connect() as conn:
        rows = conn.execute(query, {"v": version_id, "n": limit}).all()
    return [
        SeatResult(int(mid), int(seat), int(players), int(placing), int(score or 0), _day(at))
        for mid, seat, placing, score, at, players in rows
    ]


def _day(at: object) -> date | None:
    if isinstance(at, datetime):
        return at.date()
    if isinstance(at, str) and len(at) >= 10:
        return date.fromisoformat(at[:10])
    return None


def by_seat(results: list[SeatResult]) -> list[tuple[str, float, int]]:
    """(``"4p seat 2"``, share of first places, games) for each table size and seat played."""
    games: Counter[tuple[int, int]] = Counter()
    wins: Counter[tuple[int, int]] = Counter()
    for r in results:
        games[(r.players, r.seat)] += 1
        wins[(r.players, r.seat)] += r.placing == 1
    return [(f"{p}p·{s + 1}", wins[(p, s)] / n, n) for (p, s), n in sorted(games.items())]


def per_day(results: list[SeatResult], days: int = 30) -> list[tuple[date, int]]:
    """Games per day over the last ``days`` days that have any (oldest first)."""
    counts = Counter(r.day for r in results if r.day is not None)
    return sorted(counts.items())[-days:]


def head_to_head(
    db: Database, tournament_id: int, versions: list[int], window: int = H2H_WINDOW
) -> tuple[list[list[float | None]], list[list[int]]]:
    """For each pair of ``versions`` (row, column): the share of their meetings in the ladder's
    last ``window`` finished matches where the row finished ahead (a tie counts a half), and how
    many meetings; None where they never met."""
    bound = text('SELECT id FROM "match" WHERE tournament_id = :t ORDER BY id DESC LIMIT 1 OFFSET :n')
    query = text(
        "SELECT ms.match_id, ms.bot_version_id, ms.placing FROM matchseat ms "
        'JOIN "match" m ON m.id = ms.match_id '
        "WHERE ms.match_id >= :lo AND m.tournament_id = :t AND m.status = 'finished'"
    )
    with db.engine.connect() as conn:
        lo = conn.execute(bound, {"t": tournament_id, "n": window}).scalar()
        rows = conn.execute(query, {"t": tournament_id, "lo": int(lo or 0)}).all()
    wanted = set(versions)
    tables: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for mid, vid, placing in rows:
        if vid in wanted and placing is not None:
            tables[int(mid)].append((int(vid), int(placing)))
    index = {v: i for i, v in enumerate(versions)}
    n = len(versions)
    ahead = [[0.0] * n for _ in range(n)]
    met = [[0] * n for _ in range(n)]
    for seats in tables.values():
        for a, pa in seats:
            for b, pb in seats:
                if a == b:
                    continue
                i, j = index[a], index[b]
                met[i][j] += 1
                ahead[i][j] += 1.0 if pa < pb else 0.5 if pa == pb else 0.0
    share = [[ahead[i][j] / met[i][j] if met[i][j] else None for j in range(n)] for i in range(n)]
    return share, met
