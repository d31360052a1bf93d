"""The validation service: plays the validation matches of uploaded versions on the server's
match workers, one thread, as the database's writer of those matches.

See :mod:`arena.submission.validation` for what is played and decided.  At start, uploads a dead
server left ``validating`` go back to ``pending`` and are claimed again (their finished matches
kept).  :meth:`ValidationService.stop` abandons the matches in flight (their workers are
stopped); the next start plays them again.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Hashable

from arena.store.tournaments import MatchTask
from arena.submission import validation
from arena.tournament.runner import MAX_REQUEUES, MatchExecutor, Requeue

from .executors import executor_for
from .services import ServeContext

POLL = 0.3
log = logging.getLogger(__name__)


class ValidationService:
    """Claims pending uploads, plays their matches, records results, concludes each upload."""

    name = "validation"

    def __init__(self, ctx: ServeContext) -> None:
        self.ctx = ctx
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-validation", daemon=True)
        self.error: BaseException | None = None
        self.concluded = 0

    def start(self) -> None:
        recovered = validation.recover(self.ctx.db)
        if recovered:
            self.ctx.log(f"validation: {recovered} interrupted validation(s) will be played again")
        self._thread.start()

    def wake(self) -> None:
        """Look for new uploads now (called after an upload)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)

    def alive(self) -> bool:
        """True while the service's thread runs (after stop(): it did not stop within 60 s)."""
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            with executor_for(
                self.ctx.db, jobs=self.ctx.jobs, cluster=self.ctx.cluster, log_dir=self.ctx.log_dir
            ) as executor:
                self._loop(executor)
        except BaseException as exc:  # logged loudly: the web app goes on, uploads stay pending
            self.error = exc
            log.exception("the validation service stopped")
            self.ctx.log(f"validation: stopped by an error: {type(exc).__name__}: {exc}")

    def _loop(self, executor: MatchExecutor) -> None:
        pending: dict[Hashable, tuple[int, MatchTask]] = {}
        queue: list[tuple[int, MatchTask]] = []
        left: Counter[int] = Counter()  # upload id -> matches not yet ended
        lost: Counter[int] = Counter()
        db = self.ctx.db
        while not self._stop.is_set():
            while len(pending) + len(queue) < executor.slots():
                upload_id = validation.claim(db)
                if upload_id is None:
                    break
                tasks = validation.tasks_for(db, upload_id, self.ctx.sandbox)
                if not tasks:
                    self._conclude(upload_id)
                    continue
                left[upload_id] += len(tasks)
                queue += [(upload_id, t) for t in tasks]
            while queue:
                upload_id, task = queue.pop(0)
                pending[executor.submit(task)] = (upload_id, task)
            if not pending:
                self._wake.wait(POLL)
                self._wake.clear()
                continue
            broken = False
            for handle, outcome in executor.wait(list(pending)):
                upload_id, task = pending.pop(handle)
                if isinstance(outcome, Requeue):
                    broken = broken or outcome.broken
                    lost[task.match_id] += 1
                    if lost[task.match_id] <= MAX_REQUEUES:
                        queue.append((upload_id, task))
                        continue
                    validation.fail_match(
                        db, task.match_id, f"lost {lost[task.match_id]} times: {outcome.reason}"
                    )
                elif isinstance(outcome, BaseException):
                    validation.fail_match(db, task.match_id, f"{type(outcome).__name__}: {outcome}")
                else:
                    validation.record(db, upload_id, task.match_id, outcome)
                left[upload_id] -= 1
                if left[upload_id] <= 0:
                    del left[upload_id]
                    self._conclude(upload_id)
            if broken and not self._stop.is_set():
                queue += list(pending.values())
                pending.clear()
                executor.restart()

    def _conclude(self, upload_id: int) -> None:
        status = validation.conclude(self.ctx.db, upload_id)
        self.concluded += 1
        self.ctx.log(f"validation: upload {upload_id} is {status}")
