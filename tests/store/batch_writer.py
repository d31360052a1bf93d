"""A coordinator fed instantly by precomputed real results (for the batched-writes kill test).

Usage: python batch_writer.py DATABASE_URL TOURNAMENT_ID [INFLIGHT PAUSE]

Plays 12 real 4-player greedy matches in memory (a real referee Match), then runs the real
coordinator loop (:func:`arena.tournament.runner.coordinate`) over the tournament's queued
matches with an executor that answers every match from those results, INFLIGHT (default 32) in
flight, each wait PAUSE seconds (default 0) long: results reach the coordinator in batches, each
written in one transaction together with the ladder's incremental rating update
(``record_results(..., after=rate_in_session)``).  The pause paces the run so that a test killing
the writer after N results lands before the last batch on a fast machine too.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Hashable, Sequence
from typing import Any

from arena.ladder.ratings import rate_in_session
from arena.referee import MatchResult
from arena.referee.fakechannel import FakeTable, greedy
from arena.store.db import Database
from arena.store.tournaments import pack_replay, record_results
from arena.tournament.runner import coordinate, open_run


class InstantExecutor:
    """Every match answered from ``results`` after ``pause`` seconds; ``inflight`` at a time."""

    def __init__(self, results: list[MatchResult], inflight: int, pause: float = 0.0) -> None:
        self.results, self.inflight, self.pause, self.n = results, inflight, pause, 0

    def slots(self) -> int:
        return self.inflight

    def submit(self, task: object) -> Hashable:
        self.n += 1
        return self.n

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Any]]:
        if self.pause:
            time.sleep(self.pause)
        return [(h, self.results[int(str(h)) % len(self.results)]) for h in handles]

    def restart(self) -> None:
        pass

    def close(self) -> None:
        pass


def batch_recorder(db: Database, items: Sequence[tuple[int, MatchResult]]) -> list[bool]:
    return record_results(db, items, after=rate_in_session)


def main(url: str, tournament_id: int, inflight: int = 32, pause: float = 0.0) -> None:
    async def play() -> list[MatchResult]:
        return [await FakeTable(4, seed=seed).play([greedy] * 4) for seed in range(12)]

    results = [pack_replay(r) for r in asyncio.run(play())]
    db = Database(url)
    print("writing", flush=True)
    coordinate(db, tournament_id, open_run(db, tournament_id), InstantExecutor(results, inflight, pause),
               batch_recorder=batch_recorder)  # fmt: skip
    db.close()


if __name__ == "__main__":
    if len(sys.argv) == 5:
        main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    else:
        main(sys.argv[1], int(sys.argv[2]))
