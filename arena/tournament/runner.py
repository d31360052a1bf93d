"""The coordinator: hands queued matches to worker processes and is the database's one writer.

Results and match status are written together, so killing the coordinator at any moment loses
at most the matches in flight, which :func:`run_tournament` re-queues when it is started again
(``arena tournament resume``).  A worker that dies takes only its current match with it: the
match goes back to the queue and a new pool is started (a few times, then it fails loudly).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from arena.referee import MatchResult, RefereeConfig
from arena.sandbox import require_bwrap
from arena.store.db import Database, StoreError, arena_home
from arena.store.tournaments import (
    MatchTask,
    finish_tournament,
    get_tournament,
    mark_running,
    prepare_resume,
    queued_tasks,
    record_failure,
    record_result,
    status_counts,
)

from .worker import init_worker, play_task

MAX_POOL_RESTARTS = 3


class TournamentError(StoreError):
    """The tournament could not be completed (e.g. workers kept dying)."""


@dataclass
class Progress:
    """What a progress display is told after every finished match."""

    tournament_id: int
    total: int
    done: int
    failed: int
    last: MatchResult | None
    task: MatchTask | None


ProgressFn = Callable[[Progress], None]


def default_jobs() -> int:
    """One worker per core."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def run_tournament(
    db: Database,
    tournament_id: int,
    *,
    jobs: int | None = None,
    progress: ProgressFn | None = None,
    config: RefereeConfig | None = None,
    stop_after: int | None = None,
) -> None:
    """Play every queued match of the tournament (re-queueing ones a dead run left behind).

    ``stop_after`` ends the run after that many matches (for tests and partial runs).
    """
    get_tournament(db, tournament_id)
    prepare_resume(db, tournament_id)
    tasks = queued_tasks(db, tournament_id)
    if any(t.sandbox is not None for t in tasks):
        require_bwrap()  # refuse untrusted bots loudly rather than run them unsandboxed
    counts = status_counts(db, tournament_id)
    total = sum(counts.values())
    done = counts.get("finished", 0)
    failed = 0
    jobs = jobs or default_jobs()
    log_dir = arena_home() / "logs" / f"tournament-{tournament_id}"
    queue = list(reversed(tasks))
    restarts = 0
    played = 0
    while queue:
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs gRPC
        pool = ProcessPoolExecutor(
            jobs, mp_context=ctx, initializer=init_worker, initargs=(str(log_dir), config)
        )
        pending: dict[Future[MatchResult], MatchTask] = {}
        broken = False
        try:
            while queue or pending:
                while queue and len(pending) < jobs and not broken:
                    if stop_after is not None and played + len(pending) >= stop_after:
                        break
                    task = queue.pop()
                    mark_running(db, [task.match_id])
                    pending[pool.submit(play_task, task)] = task
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    task = pending.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        queue.append(task)  # the worker died: the match goes back to the queue
                        continue
                    except Exception as exc:  # the arena failed, not a bot: recorded loudly
                        record_failure(db, task.match_id, f"{type(exc).__name__}: {exc}")
                        failed += 1
                        played += 1
                    else:
                        record_result(db, task.match_id, result)
                        done += 1
                        played += 1
                        if progress is not None:
                            progress(Progress(tournament_id, total, done, failed, result, task))
                if broken:
                    for fut, task in list(pending.items()):
                        pending.pop(fut)
                        queue.append(task)
                    break
            if stop_after is not None and played >= stop_after:
                break
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if broken:
            restarts += 1
            prepare_resume(db, tournament_id)
            if restarts > MAX_POOL_RESTARTS:
                raise TournamentError(
                    f"worker processes died {restarts} times; {len(queue)} matches left queued. "
                    f"Check the bot logs in {log_dir} and run 'arena tournament resume {tournament_id}'."
                )
            continue
        break
    finish_tournament(db, tournament_id)
