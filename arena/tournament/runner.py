"""The coordinator: hands queued matches to an executor and is the database's one writer.

Results and match status are written together, so killing the coordinator at any moment loses
at most the matches in flight, which :func:`run_tournament` re-queues when it is started again
(``arena tournament resume``).  A worker that dies takes only its current match with it: the
match goes back to the queue and a new pool is started (a few times, then it fails loudly).

A tournament has one coordinator at a time (its lease, :mod:`arena.store.lease`); a stop signal
(SIGTERM, Ctrl-C) ends a run cleanly, and a dead run's leftovers are reaped by the next one
(:mod:`arena.tournament.runfile`).

The submit/collect/record loop (:func:`coordinate`) is the same wherever matches are played;
what differs sits behind :class:`MatchExecutor`: :class:`LocalExecutor` (worker processes on this
machine) and :class:`arena.tournament.cluster.DaskExecutor` (a Dask cluster).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError

from arena import lifecycle
from arena.lifecycle import ProcessRef
from arena.referee import MatchResult, RefereeConfig
from arena.sandbox import require_bwrap
from arena.store.db import Database, StoreError, arena_home
from arena.store.lease import LeaseHolder, coordinator_lease, go_on_command
from arena.store.retry import failure_line
from arena.store.tournaments import (
    MatchTask,
    finish_tournament,
    get_tournament,
    mark_running,
    prepare_resume,
    queued_tasks,
    record_failure,
    record_result,
    record_results,
    status_counts,
    tournament_sandbox,
)

from .affinity import Pinning
from .formats import Finished
from .pull import NotPullableError, planned_total, pull
from .runfile import RunFile, reap_dead_run, run_path
from .worker import init_worker, play_task

MAX_POOL_RESTARTS = 3
MAX_REQUEUES = 3  # a match whose worker was lost this many times more is recorded as failed
POLL = 0.25  # seconds the coordinator waits for results before it looks for a stop request
ABORT_GRACE = 5.0  # seconds a stopped worker gets to stop its bots before it is killed
SHUTDOWN_WAIT = 15.0  # seconds an aborted pool's own threads get to end once its workers are gone
DEAD_WORKER_GRACE = 10.0  # seconds a dead worker may go unnoticed by its pool before it is replaced

log = logging.getLogger(__name__)


class TournamentError(StoreError):
    """The tournament could not be completed (e.g. workers kept dying)."""


class RunOver(Exception):
    """Raised by a :func:`coordinate` ``puller`` that has nothing more for this run although the
    tournament goes on (the ladder's per-run ``max_tables``).  The run ends as when the format is
    finished: what is in flight is played and recorded, the executor is closed (not aborted),
    but the tournament is not marked finished; :func:`coordinate` then raises it again, so the
    caller knows how the run ended."""


@dataclass
class Progress:
    """What a progress display is told: once when the run starts, holding the tournament
    (``last`` and ``task`` None: where it stands), then after every finished match."""

    tournament_id: int
    total: int
    done: int
    failed: int
    last: MatchResult | None
    task: MatchTask | None


ProgressFn = Callable[[Progress], None]


@dataclass(frozen=True)
class Requeue:
    """A match that did not complete through no fault of its own (its worker was lost, ...):
    it goes back to the queue."""

    reason: str
    broken: bool = False  # the executor must restart before anything else is submitted
    counted: bool = True  # counts towards the match's MAX_REQUEUES


Outcome = MatchResult | Requeue | BaseException


class MatchExecutor(Protocol):
    """Where matches are played.  Handles are whatever :meth:`submit` returns (hashable)."""

    def slots(self) -> int:
        """How many matches to keep in flight now."""
        ...

    def submit(self, task: MatchTask) -> Hashable:
        """Start playing ``task``; return its handle."""
        ...

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Outcome]]:
        """Block until some of ``handles`` ended (or a short while passed: may return nothing)."""
        ...

    def restart(self) -> None:
        """Recover after a ``broken`` outcome, once nothing is in flight any more."""
        ...

    def close(self) -> None:
        """Stop; matches still in flight are abandoned (they stay ``running`` until resumed)."""
        ...


# An executor may also have ``abort()``: stop at once, abandoning the matches in flight and
# stopping their bots (a stop signal, an error).  Without one, :meth:`MatchExecutor.close` is used.


@contextmanager
def interrupts_held(signals: Collection[int] = (signal.SIGINT,)) -> Iterator[None]:
    """Block SIGINT (or ``signals``) in this thread while the body runs (then restore the mask):
    a worker process the pool spawns meanwhile inherits the mask through its exec and so cannot
    be interrupted while it imports (a terminal's Ctrl-C reaches the whole group, and each worker
    printed a ``KeyboardInterrupt`` traceback from the middle of its imports).  The worker
    unblocks it once its own handler is in place (:func:`arena.tournament.worker.init_worker`;
    a local Dask cluster's: :func:`arena.tournament.cluster.leave_stop_signals_to_the_nanny`),
    and then gets the pending signal.  This process loses nothing: a blocked signal stays
    pending, and Python's handler runs in the main thread whichever thread the kernel hands the
    signal to."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class LocalExecutor:
    """A pool of worker processes on this machine, each with its own referee and bot pool.

    Its workers die with this process (see :func:`arena.tournament.worker.init_worker`); with a
    ``run`` file they carry its marker and are recorded in it as they start.  With two or more
    workers and no more than the cores, each is pinned to a core of its own (``pin``: None
    decides by ``ARENA_PIN_WORKERS``; :mod:`arena.tournament.affinity`).  With a ``live_socket``
    the workers publish their matches' events there (:mod:`arena.live`); this process's own
    environment is left as it is.
    """

    def __init__(
        self,
        jobs: int,
        log_dir: Path,
        config: RefereeConfig | None,
        run: RunFile | None = None,
        pin: bool | None = None,
        live_socket: str | None = None,
    ) -> None:
        self.jobs = jobs
        self.pin = pin
        self.live_socket = live_socket
        self.log_dir = log_dir
        self.config = config
        self.run = run
        self.workers: list[ProcessRef] = []
        self.dead_grace = DEAD_WORKER_GRACE
        self._dead_since: float | None = None  # when a dead worker the pool ignores was first seen
        self.pool = self._pool()

    play: Callable[[MatchTask], MatchResult] = staticmethod(play_task)
    """What a worker runs for a task (a module-level function: the workers are spawned)."""

    def _pool(self) -> ProcessPoolExecutor:
        lifecycle.start_resource_tracker()  # before the pool's semaphores: a SIGHUP spares it
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs gRPC
        marker = self.run.marker if self.run is not None else None
        pinning = Pinning.for_pool(ctx, self.jobs, self.pin)  # fresh per pool: cores from the first
        return ProcessPoolExecutor(
            self.jobs,
            mp_context=ctx,
            initializer=init_worker,
            initargs=(str(self.log_dir), self.config, os.getpid(), marker, pinning, self.live_socket),
        )

    def slots(self) -> int:
        return self.jobs

    def submit(self, task: MatchTask) -> Hashable:
        try:
            with interrupts_held():  # a worker spawned now starts with SIGINT blocked (see there)
                future = self.pool.submit(self.play, task)
        except BrokenProcessPool as exc:  # a worker died since the last wait(): requeued by wait()
            future = Future()
            future.set_exception(exc)
        self._note_processes()
        return future

    def _note_processes(self) -> None:
        """Remember the pool's worker processes (and the resource tracker) as they appear."""
        pids = list(getattr(self.pool, "_processes", None) or {})
        known = {w.pid for w in self.workers}
        fresh = [ProcessRef.of(pid) for pid in pids if pid not in known]
        if not fresh:
            return
        self.workers += fresh
        if self.run is not None:
            from multiprocessing import resource_tracker

            tracker = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
            self.run.note(self.workers, [ProcessRef.of(tracker)] if isinstance(tracker, int) else [])

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Outcome]]:
        futures: list[Future[MatchResult]] = [h for h in handles if isinstance(h, Future)]
        finished, _ = wait(futures, timeout=POLL, return_when=FIRST_COMPLETED)
        out: list[tuple[Hashable, Outcome]] = []
        for fut in finished:
            try:
                out.append((fut, fut.result()))
            except BrokenProcessPool:  # the worker died: the match goes back to the queue
                out.append((fut, Requeue("a worker process died", broken=True)))
            except Exception as exc:  # the arena failed, not a bot: recorded loudly
                out.append((fut, exc))
        if not finished and futures and self._unnoticed_death():
            reason = (
                "a worker process died and its pool did not notice within "
                f"{self.dead_grace:g} s (its result pipe was left mid-message); the pool is replaced"
            )
            log.warning("%s", reason)
            return [(fut, Requeue(reason, broken=True)) for fut in futures]
        return out

    def _unnoticed_death(self) -> bool:
        """Whether a worker of the pool has been dead for :attr:`dead_grace` seconds while the pool
        still counts it as running.

        The pool's manager thread notices a dead worker by its sentinel, unless it is blocked
        reading a result the dead worker had begun to send (SIGKILLed mid-message: the other
        workers hold the pipe open, so the read never ends).  Then the futures never complete and
        a coordinator waiting for them would wait for ever: this is how it finds out."""
        processes = dict(getattr(self.pool, "_processes", None) or {})
        dead = any(p.exitcode is not None for p in processes.values())
        if not dead:
            self._dead_since = None
            return False
        now = time.monotonic()
        if self._dead_since is None:
            self._dead_since = now
        return now - self._dead_since >= self.dead_grace

    def restart(self) -> None:
        """A new pool after a broken one (bounded: the old pool is aborted, not joined, as its
        manager thread may be stuck)."""
        self.abort()
        self.workers = [w for w in self.workers if w.alive()]
        self._dead_since = None
        self.pool = self._pool()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        """Stop now: each worker is sent SIGTERM (it cancels its match, stops its bots and
        exits) and killed if it has not exited within :data:`ABORT_GRACE` seconds.  Returns
        within about ``ABORT_GRACE + SHUTDOWN_WAIT`` seconds, whatever the pool's own threads do
        (one still busy then is logged with where every thread is, and left)."""
        self._note_processes()  # one the pool started since the last submit is stopped too
        live = [w for w in self.workers if w.alive()]
        for w in live:
            w.signal(signal.SIGTERM)
        for w in lifecycle.wait_dead(live, ABORT_GRACE):
            w.signal(signal.SIGKILL)
        manager = getattr(self.pool, "_executor_manager_thread", None)
        results = getattr(self.pool, "_result_queue", None)  # shutdown() lets go of it
        self.pool.shutdown(wait=False, cancel_futures=True)
        if isinstance(manager, threading.Thread):
            manager.join(min(2.0, SHUTDOWN_WAIT))
            if manager.is_alive():
                # blocked reading a message a killed worker left unfinished: every worker is gone
                # now, so closing this process's own end of the result pipe ends that read (EOF)
                writer = getattr(results, "_writer", None)
                if writer is not None:
                    with contextlib.suppress(OSError):
                        writer.close()
                manager.join(SHUTDOWN_WAIT)
            if manager.is_alive():
                log.warning(
                    "the worker pool's manager thread did not end within %.0f s of its workers' "
                    "end; left behind. Threads:\n%s", SHUTDOWN_WAIT, lifecycle.thread_stacks(),
                )  # fmt: skip


def default_jobs() -> int:
    """One worker per core."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def open_run(db: Database, tournament_id: int) -> list[MatchTask]:
    """Start (or resume) a run: matches a dead run left ``running`` are queued again; return
    every queued match, in schedule order."""
    get_tournament(db, tournament_id)
    prepare_resume(db, tournament_id)
    return queued_tasks(db, tournament_id)


def pull_tasks(db: Database, tournament_id: int) -> list[MatchTask] | None:
    """Ask the tournament's format for more (:func:`arena.tournament.pull.pull`, which stores
    what it hands out); return every queued match, or None when the format is finished.  A
    tournament without a registered format (the lobby's) has nothing to pull: its queued
    matches, or None when there are none."""
    try:
        answer = pull(db, tournament_id)
    except NotPullableError:
        return queued_tasks(db, tournament_id) or None
    if isinstance(answer, Finished):
        return None
    return queued_tasks(db, tournament_id)


def record(db: Database, match_id: int, result: MatchResult) -> bool:
    """Write a finished match; False (and nothing written) when it was already finished: a late
    or duplicate result (e.g. from another coordinator of the same tournament) is a no-op."""
    return record_result(db, match_id, result)


def record_batch(db: Database, items: Sequence[tuple[int, MatchResult]]) -> list[bool]:
    """Write finished matches in one transaction (:func:`arena.store.tournaments.record_results`);
    one bool per item, as :func:`record` returns it."""
    return record_results(db, items)


BatchRecorder = Callable[[Database, Sequence[tuple[int, MatchResult]]], list[bool]]


def _one_by_one(recorder: Callable[[Database, int, MatchResult], bool]) -> BatchRecorder:
    """A batch recorder that writes each result on its own (a recorder without a batch form)."""

    def write(db: Database, items: Sequence[tuple[int, MatchResult]]) -> list[bool]:
        return [recorder(db, mid, result) for mid, result in items]

    return write


def _abort(executor: MatchExecutor) -> None:
    abort = getattr(executor, "abort", None)
    if callable(abort):
        abort()
    else:
        executor.close()


def _next_free_seed(queue: Sequence[MatchTask], playing: Sequence[MatchTask]) -> int | None:
    """The index of the next match of ``queue`` (taken from its end) whose seed no match in
    ``playing`` has, or None.  Two seatings of one seed share their dice, and bots of the same
    program in both could pass the throws from one to the other while both run (a covert
    channel through the machine's load was shown to work between sandboxes): a seed is played
    by one match at a time."""
    busy = {t.seed for t in playing}
    for k in range(len(queue) - 1, -1, -1):
        if queue[k].seed not in busy:
            return k
    return None


def _handed_out(task: MatchTask, queue: Sequence[MatchTask]) -> MatchTask:
    """``task`` as handed to a worker: with :attr:`MatchTask.seed_again` when a match of its seed
    is still queued (the seatings of a group are queued together, near each other at the end)."""
    return replace(task, seed_again=any(q.seed == task.seed for q in reversed(queue)))


def coordinate(
    db: Database,
    tournament_id: int,
    tasks: list[MatchTask],
    executor: MatchExecutor,
    *,
    progress: ProgressFn | None = None,
    stop_after: int | None = None,
    hint: str = "",
    guard: Callable[[], None] | None = None,
    puller: Callable[[Database, int], list[MatchTask] | None] = pull_tasks,
    recorder: Callable[[Database, int, MatchResult], bool] = record,
    batch_recorder: BatchRecorder | None = None,
    again: str | None = None,
) -> None:
    """Play ``tasks`` on ``executor``, recording every result as it comes (the one writer).
    (``puller`` and ``recorder`` replace :func:`pull_tasks` and :func:`record`: the ladder's.)

    No two matches of one seed are in play at once (:func:`_next_free_seed`): the next match
    handed out is the first queued one whose seed is free.

    The results that one wait on the executor returns are written together, in one transaction
    (``batch_recorder``; :func:`record_batch` by default, one ``recorder`` call per result when
    only a custom ``recorder`` is given), and the matches handed out together are marked running
    in one transaction: a coordinator fed faster than it writes absorbs results in batches.

    When the queue is empty the tournament's format is asked for more, given the results
    recorded so far (:func:`pull_tasks`): a Swiss or knockout round is handed out as soon as the
    previous one is done, and the run ends when the format is finished (only then is the
    tournament marked finished).  Lost matches go back to the queue (played first); a match
    lost more than :data:`MAX_REQUEUES` times is recorded as failed, and an executor that breaks more than
    :data:`MAX_POOL_RESTARTS` times ends the run with :class:`TournamentError`.  ``guard`` is
    called on every turn of the loop and may raise to end the run (a lost lease).  ``again`` is
    the command its messages name to go on (:func:`arena.store.lease.go_on_command`).

    A stop signal (under an active :class:`arena.lifecycle.StopSignals`: SIGINT, SIGTERM,
    SIGHUP) stops the run at the next turn: the executor is aborted (matches in flight are
    abandoned and their bots stopped), what finished is recorded, the matches in flight go back
    to the queue, and :class:`arena.lifecycle.Stopped` is raised.  The executor is closed in the
    end, whatever happens (aborted when the run ends by an exception other than the puller's
    :class:`RunOver`, which ends the run like a finished format but leaves the tournament open).
    """
    if batch_recorder is None:
        batch_recorder = record_batch if recorder is record else _one_by_one(recorder)
    counts = status_counts(db, tournament_id)
    planned = planned_total(db, tournament_id) or 0  # a Swiss stores one round at a time
    total = max(sum(counts.values()), planned)
    done = counts.get("finished", 0)
    failed = 0
    if progress is not None:  # where the run starts (a display's first line: after the lease, so a
        progress(Progress(tournament_id, total, done, failed, None, None))  # refused run shows none)
    queue = list(reversed(tasks))
    known = {t.match_id for t in tasks}
    over = False  # the format said it is finished (or, with run_over, the puller: this run is)
    run_over: RunOver | None = None
    ask = True  # results came in since the format was last asked
    pending: dict[Hashable, MatchTask] = {}
    requeues: Counter[int] = Counter()
    restarts = 0
    played = 0
    broken = False
    ending = "abort"  # how the executor is let go: "close" after a loop that ended by itself
    try:
        with lifecycle.deferred_stop():
            while True:
                if guard is not None:
                    guard()
                stop = lifecycle.stop_requested()
                if stop is not None:
                    _abort(executor)
                    ending = "done"
                    prepare_resume(db, tournament_id)  # what was in flight goes back to the queue
                    raise lifecycle.Stopped(stop)
                room = stop_after is None or played + len(pending) < stop_after
                if not queue and not over and ask and not broken and room:
                    ask = False
                    try:
                        fresh, run_over = puller(db, tournament_id), None
                    except RunOver as exc:  # nothing more for this run: ends as finished, not marked so
                        fresh, run_over = None, exc
                    if fresh is None:
                        over = not pending
                    else:
                        queue = [t for t in reversed(fresh) if t.match_id not in known]
                        known.update(t.match_id for t in queue)
                        total = max(sum(status_counts(db, tournament_id).values()), planned)
                if not queue and not pending and not over:
                    if stop_after is not None and played >= stop_after:
                        break
                    if not ask:
                        raise TournamentError(
                            f"tournament {tournament_id}: its format waits for results, but no match "
                            f"is queued or running. Run '{go_on_command(tournament_id, again)}'."
                        )
                    continue
                handing: list[MatchTask] = []
                while queue and not broken and len(pending) + len(handing) < executor.slots():
                    if stop_after is not None and played + len(pending) + len(handing) >= stop_after:
                        break
                    k = _next_free_seed(queue, [*pending.values(), *handing])
                    if k is None:  # every queued match waits for its seed's match in play
                        break
                    handing.append(_handed_out(queue.pop(k), queue))
                if handing:
                    mark_running(db, [task.match_id for task in handing])
                    for task in handing:
                        pending[executor.submit(task)] = task
                if not pending:
                    break
                finished: list[tuple[MatchTask, MatchResult]] = []
                for handle, outcome in executor.wait(list(pending)):
                    task = pending.pop(handle)
                    ask = True
                    if isinstance(outcome, Requeue):
                        broken = broken or outcome.broken
                        requeues[task.match_id] += int(outcome.counted and not outcome.broken)
                        if requeues[task.match_id] > MAX_REQUEUES:
                            reason = f"lost {MAX_REQUEUES + 1} times: {outcome.reason}"
                            record_failure(db, task.match_id, reason)
                            failed += 1
                            played += 1
                        else:
                            queue.append(task)
                    elif isinstance(outcome, BaseException):
                        record_failure(db, task.match_id, f"{type(outcome).__name__}: {outcome}")
                        failed += 1
                        played += 1
                    else:
                        finished.append((task, outcome))
                if finished:
                    written = batch_recorder(db, [(task.match_id, result) for task, result in finished])
                    for (task, result), ok in zip(finished, written, strict=True):
                        done += ok
                        played += 1
                        if progress is not None:
                            progress(Progress(tournament_id, total, done, failed, result, task))
                if broken and lifecycle.stop_requested() is None:
                    for task in pending.values():  # the whole pool is gone: all of it goes back
                        queue.append(task)
                    pending.clear()
                    restarts += 1
                    prepare_resume(db, tournament_id)
                    if restarts > MAX_POOL_RESTARTS:
                        raise TournamentError(
                            f"worker processes died {restarts} times; {len(queue)} matches left queued. "
                            f"{hint}Run '{go_on_command(tournament_id, again)}'."
                        )
                    executor.restart()
                    broken = False
                if stop_after is not None and played >= stop_after and not pending:
                    break
            ending = "close"
            executor.close()
            ending = "done"
            if over and run_over is not None:
                raise run_over
            if over:
                finish_tournament(db, tournament_id)
    finally:
        if ending == "close":
            executor.close()
        elif ending == "abort":
            _abort(executor)


@contextmanager
def database_failures(
    tournament_id: int, again: str | None = None, *, what: str | None = None
) -> Iterator[None]:
    """A database failure during a run (a full disk, a dropped connection, ...) becomes a
    :class:`TournamentError` that says what happened, during what (``what``, by default
    ``tournament ID``; the ladder says ``the ladder``), and what to do (run ``again``, by default
    ``arena tournament resume ID``: :func:`arena.store.lease.go_on_command`).  A match's result
    is one transaction, so a failed write leaves that match unfinished, never partly recorded."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise TournamentError(
            f"the database failed during {what or f'tournament {tournament_id}'}: {failure_line(exc)}. "
            f"Nothing partial was recorded (each match is written in one transaction); when the "
            f"database is reachable and has space again, run '{go_on_command(tournament_id, again)}'."
        ) from exc


def run_tournament(
    db: Database,
    tournament_id: int,
    *,
    jobs: int | None = None,
    progress: ProgressFn | None = None,
    config: RefereeConfig | None = None,
    stop_after: int | None = None,
    wait: bool = False,
    on_wait: Callable[[LeaseHolder], None] | None = None,
    pin: bool | None = None,
) -> None:
    """Play every queued match of the tournament (re-queueing ones a dead run left behind) in
    ``jobs`` worker processes on this machine (pinned to cores as :class:`LocalExecutor` says).

    The tournament's lease is taken first (:mod:`arena.store.lease`): another live coordinator
    of it raises :class:`arena.store.lease.LeaseHeldError`, or with ``wait`` is waited for
    (``on_wait(holder)`` is told once).  Then whatever a dead run of it left running on this
    machine is reaped (:mod:`arena.tournament.runfile`), and this run is recorded in its place.

    ``stop_after`` ends the run after that many matches (for tests and partial runs).
    """
    with database_failures(tournament_id):
        get_tournament(db, tournament_id)
        with coordinator_lease(db, tournament_id, wait=wait, on_wait=on_wait) as lease:
            path = run_path(db.url, tournament_id)
            reap_dead_run(path)
            run = RunFile.new(path, tournament_id)
            run.save()
            try:
                tasks = open_run(db, tournament_id)
                if tournament_sandbox(db, tournament_id) is not None:
                    require_bwrap()  # refuse untrusted bots loudly rather than run them unsandboxed
                log_dir = arena_home() / "logs" / f"tournament-{tournament_id}"
                executor = LocalExecutor(jobs or default_jobs(), log_dir, config, run, pin)
                coordinate(
                    db,
                    tournament_id,
                    tasks,
                    executor,
                    progress=progress,
                    stop_after=stop_after,
                    hint=f"Check the bot logs in {log_dir}. ",
                    guard=lease.check,
                )
            finally:
                run.remove()
