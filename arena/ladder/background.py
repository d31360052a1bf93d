"""The ladder as one of ``arena serve``'s background services (:mod:`arena.serve.services`).

:class:`LadderService` runs :func:`arena.ladder.service.run_ladder` on a thread of its own with
its own match workers (``jobs`` local processes, or the server's Dask cluster), from the moment
the server starts until it stops.  ``stop()`` abandons the matches in flight (they stay
``running`` and are played again when the ladder next starts: nothing finished is lost or
doubled).  An error (the database away, another server holding the ladder's lease) is logged
and the ladder tried again after :data:`RETRY` seconds.

It is on by default; ``ARENA_LADDER=0`` in the server's environment (or ``extras["ladder"] =
False`` in its :class:`~arena.serve.services.ServeContext`) leaves it off.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from arena.lifecycle import thread_stacks
from arena.store.db import arena_home
from arena.store.lease import LeaseHeldError

from .field import GUESSABLE_WARNING, find_ladder, guessable_seed, stored_differences
from .service import LadderSettings, LadderStopped, run_ladder

if TYPE_CHECKING:
    from arena.serve.services import ServeContext
    from arena.tournament.runfile import RunFile
    from arena.tournament.runner import MatchExecutor

RETRY = 30.0
STOP_WAIT = 60.0
LADDER_ENV = "ARENA_LADDER"

log = logging.getLogger(__name__)


def wanted(ctx: ServeContext) -> bool:
    """Whether this server runs the ladder (see the module docstring)."""
    if os.environ.get(LADDER_ENV, "1").strip().lower() in ("0", "no", "false", "off"):
        return False
    return bool(ctx.extras.get("ladder", True))


class LadderService:
    """``arena serve``'s ladder (see the module docstring)."""

    name = "ladder"

    def __init__(self, ctx: ServeContext, settings: LadderSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or LadderSettings(sandbox=ctx.sandbox)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-ladder", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ask the ladder to stop and wait up to :data:`STOP_WAIT` seconds for it; one still
        running then is logged with where every thread of this process is."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=STOP_WAIT)
        if self._thread.is_alive():
            self.ctx.log(f"ladder: still stopping after {STOP_WAIT:.0f} s; threads:\n{thread_stacks()}")

    def alive(self) -> bool:
        """True while the service's thread runs (after stop(): it did not stop within
        :data:`STOP_WAIT` seconds)."""
        return self._thread.is_alive()

    def _executor(self, tournament_id: int, run: RunFile) -> MatchExecutor:
        if self.ctx.cluster:
            from arena.serve.executors import ClusterMatches

            return ClusterMatches(self.ctx.db, self.ctx.cluster)
        from arena.live.channel import socket_path
        from arena.tournament.runner import LocalExecutor

        log_dir = self.ctx.log_dir or arena_home() / "logs" / f"ladder-{tournament_id}"
        live = str(socket_path(self.ctx.db.url))  # its matches are followed live
        return LocalExecutor(self.ctx.jobs, log_dir, None, run, live_socket=live)

    def _warn_sandbox(self) -> None:
        """Say so when the stored ladder's sandbox is not the server's (the stored one is kept)."""
        found = find_ladder(self.ctx.db)
        if found is None or self.settings.new:
            return
        if guessable_seed(found.seed):
            self.ctx.log(f"ladder: warning: {GUESSABLE_WARNING.format(id=found.id)}")
        for _what, kept, asked in stored_differences(found, sandboxed=self.settings.sandbox is not None):
            self.ctx.log(
                f"ladder: tournament {found.id} runs its bots {kept} as it was created, not {asked} "
                "as this server would; 'arena ladder run --new' starts a new ladder"
            )

    def _run(self) -> None:
        warned = False
        while not self._stop.is_set():
            try:
                if not warned:
                    self._warn_sandbox()
                    warned = True
                tid = run_ladder(
                    self.ctx.db, self.settings, jobs=self.ctx.jobs, executor=self._executor, stop=self._stop
                )
                self.ctx.log(  # it returns only when the run's max_tables is reached
                    f"ladder: tournament {tid}: this run handed out its {self.settings.max_tables} tables "
                    "(max_tables) and ends; the ladder stays open for the next run"
                )
                return
            except LadderStopped:
                return
            except LeaseHeldError as exc:
                self.ctx.log(f"ladder: another coordinator runs it ({exc}); trying again in {RETRY:.0f} s")
            except BaseException as exc:  # logged loudly; the web app goes on
                self.error = exc
                log.exception("the ladder stopped")
                self.ctx.log(
                    f"ladder: stopped by an error: {type(exc).__name__}: {exc}; again in {RETRY:.0f} s"
                )
            self._stop.wait(RETRY)


def service(ctx: ServeContext) -> LadderService | None:
    """The factory for :data:`arena.serve.services.SERVICES`."""
    return LadderService(ctx) if wanted(ctx) else None
