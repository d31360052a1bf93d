"""The ladder service: the ladder format played forever on the worker pool, until stopped.

:func:`run_ladder` is :func:`arena.tournament.runner.run_tournament` for the ladder: the same
lease (one coordinator), run file (a dead run's leftovers reaped), executor (local worker
processes, or a Dask cluster) and pull loop (:func:`~arena.tournament.runner.coordinate`), with
the ladder's puller (:func:`arena.ladder.pull.pull_ladder`: the active set read from the store
each time) and recorder (:func:`arena.ladder.ratings.record_rated`: the result and the rating
update in one transaction).  So a run killed with kill -9 and started again resumes where it
stopped: the matches it left ``running`` are queued again (their results were never written),
nothing finished is lost, and nothing is recorded or rated twice.

While fewer than two bots are active the service idles (asking again every :data:`IDLE` s); a
stop signal ends it cleanly (:class:`arena.lifecycle.Stopped`).  The ladder itself never ends: a
run ends when stopped, after ``stop_after`` matches, or after handing out its ``max_tables``
new tables and finishing them (a per-run limit, never stored: the next run goes on; see
:func:`play_ladder`).  The published Plackett-Luce table is refitted when results came in
(:func:`arena.ladder.ratings.refit`, in a process of its own: :class:`Refitter`), at most every
``refit_every`` seconds and 10% of the time.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import ParamSpec

from arena import lifecycle
from arena.live.channel import socket_path
from arena.referee import RefereeConfig
from arena.referee.timecontrol import TimeControl
from arena.sandbox import require_bwrap
from arena.sandbox.limits import SandboxLimits
from arena.store.db import Database, arena_home
from arena.store.lease import coordinator_lease
from arena.store.tournaments import MatchTask, status_counts, tournament_sandbox
from arena.tournament.runfile import RunFile, reap_dead_run, run_path
from arena.tournament.runner import (
    LocalExecutor,
    MatchExecutor,
    ProgressFn,
    RunOver,
    coordinate,
    database_failures,
    default_jobs,
    open_run,
)

from .field import ensure_ladder
from .pull import pull_ladder, tables_of
from .ratings import fit_state, record_rated, record_rated_batch, refit

P = ParamSpec("P")

IDLE = 0.5
"""Seconds between questions while the ladder has nothing to play (fewer than 2 active bots)."""
REFIT_EVERY = 30.0
REFIT_SHARE = 0.1
"""At most this share of the time is spent refitting the published table."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LadderSettings:
    """How a new ladder is set up (``seed``, ``table_sizes``, ``control``, ``sandbox``: an
    existing one keeps its stored settings, unless ``new`` starts a new ladder) and how far this
    run goes (``inflight``, ``max_tables``: the run's alone, never stored)."""

    seed: int | None = None  # None: a random secret seed (see arena.ladder.field.ensure_ladder)
    table_sizes: tuple[int, ...] = (2, 3, 4)
    control: TimeControl = field(default_factory=lambda: TimeControl(1.0, 10.0))
    sandbox: SandboxLimits | None = field(default_factory=SandboxLimits)
    inflight: int | None = None  # groups unfinished at once; default: jobs + 1
    max_tables: int | None = None  # this run hands out at most this many new tables, then ends
    new: bool = False  # start a new ladder with these settings even when there is one


@dataclass(frozen=True)
class LadderRun:
    """How a run of the ladder ended: ``ended`` is ``"stop_after"`` (it played its
    ``stop_after`` matches) or ``"max_tables"`` (it handed out its ``max_tables`` new tables and
    finished them); ``played`` counts the matches it finished or recorded as failed.  (Stopped
    otherwise, it raises instead: the ladder itself never finishes.)"""

    tournament_id: int
    played: int
    ended: str


class LadderStopped(Exception):
    """The ladder was asked to stop by its ``stop`` event (a background service's ``stop()``)."""


class RunLimitReached(RunOver):
    """This run handed out its ``max_tables`` tables and nothing of the ladder is left open: the
    run ends like a finished format (its workers closed, not aborted), the ladder goes on."""


def idle_puller(
    stop: threading.Event | None = None,
    *,
    max_tables: int | None = None,
    inflight: int | None = None,
    on_idle: Callable[[], None] | None = None,
) -> Callable[[Database, int], list[MatchTask] | None]:
    """:func:`pull_ladder` (with the run's ``max_tables``, in all, and ``inflight``), but while
    the ladder has nothing to play and nothing in flight, wait (a stop signal raises
    :class:`arena.lifecycle.Stopped`, ``stop`` :class:`LadderStopped`).  When ``max_tables`` is
    reached and nothing is left open it raises :class:`RunLimitReached` (rather than saying the
    format is finished, which would mark the ladder finished for good); it never returns None.
    ``on_idle`` is called each time it starts waiting (to say so)."""

    def puller(db: Database, tournament_id: int) -> list[MatchTask]:
        idle = False
        while True:
            tasks = pull_ladder(db, tournament_id, max_tables=max_tables, inflight=inflight)
            if tasks is None:  # only with max_tables: without it the ladder format never finishes
                raise RunLimitReached(f"{max_tables} tables handed out")
            if tasks or _something_open(db, tournament_id):
                return tasks
            if not idle and on_idle is not None:
                on_idle()
            idle = True
            signum = lifecycle.stop_requested()
            if signum is not None:
                raise lifecycle.Stopped(signum)
            if stop is not None and stop.wait(IDLE):
                raise LadderStopped("the ladder was asked to stop")
            if stop is None:
                time.sleep(IDLE)

    return puller


def _something_open(db: Database, tournament_id: int) -> bool:
    counts = status_counts(db, tournament_id)
    return bool(counts.get("queued") or counts.get("running"))


def refit_in_process(url: str, tournament_id: int) -> None:
    """:func:`arena.ladder.ratings.refit` in a worker process, over its own opening of ``url``."""
    db = Database(url)
    try:
        refit(db, tournament_id)
    finally:
        db.close()


class Refitter:
    """Refits the published table when it is stale, in a spawned process of its own (the fit is
    CPU-bound: on a thread it would hold the coordinator's interpreter lock), at most every
    ``every`` seconds and at most :data:`REFIT_SHARE` of the time (100,000 matches take about a
    minute to fit: then every ten minutes)."""

    def __init__(self, db: Database, tournament_id: int, every: float) -> None:
        self.db = db
        self.tournament_id = tournament_id
        self.every = every
        self.fits = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-ladder-refit", daemon=True)
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> Refitter:
        self._thread.start()
        return self

    def _run(self) -> None:
        pause = self.every
        while not self._stop.wait(pause):
            pause = self.every
            try:
                if fit_state(self.db, self.tournament_id).fresh:
                    continue
                if self._pool is None:
                    lifecycle.start_resource_tracker()  # before the pool's semaphores: a SIGHUP spares it
                    self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
                t0 = time.monotonic()
                self._pool.submit(refit_in_process, self.db.url, self.tournament_id).result()
                self.fits += 1
                pause = max(self.every, (time.monotonic() - t0) / REFIT_SHARE)
            except Exception as exc:  # never take the ladder down for the published table
                log.warning("ladder %s: refitting the table failed: %s", self.tournament_id, exc)
                if self._pool is not None:  # a fresh process next time; this one is let go
                    self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None

    def stop(self) -> None:
        """End the refits: an idle refit process is shut down cleanly; a fit still running after
        30 s is abandoned (its process terminated; the published table stays stale)."""
        self._stop.set()
        self._thread.join(30.0)
        if self._pool is None:
            return
        if not self._thread.is_alive():  # no fit in progress: let the process go
            self._pool.shutdown(wait=True)
            return
        procs = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()


def play_ladder(
    db: Database,
    settings: LadderSettings | None = None,
    *,
    jobs: int | None = None,
    config: RefereeConfig | None = None,
    executor: Callable[[int, RunFile], MatchExecutor] | None = None,
    progress: ProgressFn | None = None,
    stop_after: int | None = None,
    refit_every: float = REFIT_EVERY,
    wait: bool = False,
    stop: threading.Event | None = None,
    on_idle: Callable[[], None] | None = None,
) -> LadderRun:
    """Run the ladder (created with ``settings`` when there is none, or when ``settings.new``)
    until stopped; say how the run ended.  ``executor(tournament_id, run)`` makes the executor
    (default: ``jobs`` local worker processes); ``stop_after`` ends the run after that many
    matches; ``settings.max_tables`` ends it once it has handed out that many new tables and
    finished them (with the matches an earlier run left open).  Either way the run ends as a
    finished tournament's does: what is in flight is recorded and the workers are closed.
    ``on_idle`` is called whenever the ladder starts waiting for active bots.  Setting
    ``stop`` ends it with :class:`LadderStopped` and a stop signal with
    :class:`arena.lifecycle.Stopped` (the workers are aborted, matches in flight abandoned: they
    are played again by the next run).  No limit is stored: the next run goes on from where this
    one ended."""
    s = settings or LadderSettings()
    n = jobs or default_jobs()
    inflight = s.inflight or n + 1
    t = ensure_ladder(db, seed=s.seed, table_sizes=s.table_sizes, control=s.control, sandbox=s.sandbox,
                      new=s.new)  # fmt: skip
    assert t.id is not None
    tid = t.id
    again = "arena ladder run"  # what goes on with it ('arena tournament resume' refuses a ladder)
    failures = database_failures(tid, again, what="the ladder")
    with failures, coordinator_lease(db, tid, wait=wait, again=again) as lease:
        path = run_path(db.url, tid)
        reap_dead_run(path)
        run = RunFile.new(path, tid)
        run.save()
        refitter = Refitter(db, tid, refit_every).start()

        def guard() -> None:
            lease.check()
            if stop is not None and stop.is_set():
                raise LadderStopped("the ladder was asked to stop")

        try:
            tasks = open_run(db, tid)
            before = _played(db, tid)
            limit = None if s.max_tables is None else tables_of(db, tid) + s.max_tables
            if tournament_sandbox(db, tid) is not None:
                require_bwrap()
            log_dir = arena_home() / "logs" / f"ladder-{tid}"
            made = (
                executor(tid, run)
                if executor is not None
                else LocalExecutor(n, log_dir, config, run, live_socket=str(socket_path(db.url)))
            )
            try:
                coordinate(
                    db, tid, tasks, made, progress=progress, stop_after=stop_after,
                    hint=f"Check the bot logs in {log_dir}. ", guard=guard,
                    puller=idle_puller(stop, max_tables=limit, inflight=inflight, on_idle=on_idle),
                    recorder=record_rated, batch_recorder=record_rated_batch, again=again,
                )  # fmt: skip
            except RunLimitReached:  # raised after its tables were recorded and the workers closed
                ended = "max_tables"
            else:  # the ladder's puller never says it is finished: the run played its stop_after matches
                ended = "stop_after"
            played = _played(db, tid) - before
        finally:
            refitter.stop()
            run.remove()
    return LadderRun(tid, played, ended)


def _tournament_id(play: Callable[P, LadderRun]) -> Callable[P, int]:
    """``play``, answering the ladder's tournament id rather than the :class:`LadderRun`."""

    def run(*args: P.args, **kwargs: P.kwargs) -> int:
        return play(*args, **kwargs).tournament_id

    return run


run_ladder = _tournament_id(play_ladder)
""":func:`play_ladder` (the same arguments); return the ladder's tournament id."""


def _played(db: Database, tournament_id: int) -> int:
    counts = status_counts(db, tournament_id)
    return int(counts.get("finished", 0) + counts.get("failed", 0))
