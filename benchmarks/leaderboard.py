"""The leaderboard over 10,000 stored matches: a full refit, and the web's cached table.

Usage: .venv/bin/python benchmarks/leaderboard.py [--quick] [--matches N]

Fills a fresh SQLite database with N finished matches in bulk (benchmarks/web.py's ``fill``: six
bots, two to four seats), then prints, for each rating system:

(a) a full refit, ``arena.leaderboard.leaderboard`` (what ``arena leaderboard`` and a changed
    web table do), split into reading the finished matches (one column query), building the
    rating inputs and statistics, and the rating fit itself, with the refit's CPU time (the
    process's own, which a loaded host inflates less than the wall time); and in the same run
    the reading as it was before (model objects for every match and seat, read twice) with the
    ratio;
(b) the cached table: the web app's :class:`arena.web.boards.LeaderboardCache` when no result
    came in since it was computed (p50 of 20 asks: one cheap "what changed" query), and that a
    new result invalidates it (the next ask is a refit that counts the new match).

``--quick``: 2,000 matches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def orm_read(db: Any) -> int:
    """The finished matches read as before: model objects for every match and seat (the old
    ``arena.store.results._finished``); returns the seats read."""
    from sqlmodel import col, select

    from arena.store.models import Match, MatchSeat, MatchStatus

    with db.session() as session:
        query = select(Match).where(Match.status == MatchStatus.FINISHED)
        query = query.where(col(Match.tournament_id).is_not(None))
        matches = list(session.exec(query.order_by(col(Match.finished_at), col(Match.id))).all())
        ids = [m.id for m in matches]
        n = 0
        for chunk in range(0, len(ids), 500):
            part = ids[chunk : chunk + 500]
            n += len(session.exec(select(MatchSeat).where(col(MatchSeat.match_id).in_(part))).all())
        return n


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def add_result(db: Any) -> None:
    """One more finished match (a copy of the first one's seats, the winner swapped)."""
    from sqlalchemy import insert
    from sqlmodel import select

    from arena.store.models import Match, MatchSeat, utcnow

    with db.session() as session:
        first = session.exec(select(Match).where(Match.id == 1)).one()
        seats = session.exec(select(MatchSeat).where(MatchSeat.match_id == first.id)).all()
        conn = session.connection()
        now = utcnow()
        values = {"tournament_id": first.tournament_id, "ordinal": 10**6, "seed": 1, "group_key": "extra",
                  "status": "finished", "termination": "normal", "attempts": 1, "created_at": now,
                  "finished_at": now}  # fmt: skip
        row = conn.execute(insert(Match).values(**values))
        mid = row.inserted_primary_key[0]
        conn.execute(
            insert(MatchSeat),
            [{"match_id": mid, "seat": s.seat, "bot_version_id": s.bot_version_id, "score": s.score,
              "placing": len(seats) + 1 - int(s.placing or 1), "termination": "normal"} for s in seats],
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 matches")
    parser.add_argument("--matches", type=int, default=10_000)
    args = parser.parse_args()
    n = 2000 if args.quick else args.matches
    print(f"uptime: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as home:
        os.environ["ARENA_HOME"] = home
        os.environ.pop("ARENA_DATABASE_URL", None)
        from web import fill

        from arena.leaderboard import leaderboard
        from arena.ratings import rate
        from arena.store.db import Database
        from arena.store.results import bot_stats, finished_matches, game_results
        from arena.web.boards import LeaderboardCache

        db = Database()
        _, seconds = timed(fill, db, n)
        print(f"{n} finished matches stored in {seconds:.1f}s")
        finished_matches(db)  # warm: the first query pays for opening the file
        old_reads = [timed(orm_read, db)[1] for _ in range(2)]
        new_reads = [timed(finished_matches, db)[1] for _ in range(3)]
        old, new = 2 * min(old_reads), min(new_reads)  # before: read twice (ratings, statistics)
        print(f"(a) reading the finished matches: {new * 1000:.0f} ms once as columns; as before "
              f"(model objects, twice) {old * 1000:.0f} ms: {old / new:.1f}x faster")  # fmt: skip
        matches = finished_matches(db)
        results, build = timed(game_results, db, matches=matches)
        _, stats = timed(bot_stats, db, matches=matches)
        print(f"    rating inputs {build * 1000:.0f} ms, statistics {stats * 1000:.0f} ms")
        for system in ("pl", "openskill", "elo"):
            _, fit = timed(rate, results, system)
            cpu = time.process_time()
            rows, total = timed(leaderboard, db, system=system)
            cpu = time.process_time() - cpu  # on a loaded host: the refit's own CPU time, not the wait
            print(f"    {system:9s} full refit {total * 1000:6.0f} ms (the fit alone {fit * 1000:6.0f} ms; "
                  f"CPU {cpu * 1000:4.0f} ms), {len(rows)} rows, target < 1000 ms: "
                  f"{'met' if total < 1.0 else 'NOT met'}")  # fmt: skip
        cache = LeaderboardCache(db, lambda tid, sys_: leaderboard(db, tournament_id=tid, system=sys_),
                                 sync_limit=10**9)  # fmt: skip
        first, refit = timed(cache.get, None, "pl")
        asks = [timed(cache.get, None, "pl")[1] for _ in range(20)]
        p50 = statistics.median(asks)
        print(f"(b) cached table (web LeaderboardCache, pl): first ask {refit * 1000:.0f} ms (a refit), "
              f"then p50 {p50 * 1000:.1f} ms, max {max(asks) * 1000:.1f} ms; target < 100 ms: "
              f"{'met' if p50 < 0.1 else 'NOT met'}")  # fmt: skip
        add_result(db)
        after, again = timed(cache.get, None, "pl")
        print(f"    a new result: the next ask refits ({again * 1000:.0f} ms), fresh={after.fresh}, "
              f"matches {first.matches} -> {after.matches}")  # fmt: skip
        cache.pool.shutdown(wait=True)
        db.close()
    print(f"uptime: {uptime()}")


if __name__ == "__main__":
    sys.exit(main())
