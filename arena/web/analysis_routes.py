"""``/matches/{id}/analysis``: the analysis of a stored match (arena/strength/analysis.py) as JSON.

* ``POST /matches/{id}/analysis`` queues the analysis for the one background thread that runs
  them, one at a time (a request for one already queued, running or done starts nothing), and
  answers like ``GET``.  At most :data:`MAX_WAITING` analyses wait at once, at most
  :data:`MAX_PER_ADDRESS` of them asked for by one address: beyond that the answer is 503 with
  ``Retry-After`` (an outside review queued a thread and ~3 s of CPU per anonymous POST, without
  bound);
* ``GET /matches/{id}/analysis`` answers ``{"status": "none" | "running" | "done" | "error"}``,
  with ``"analysis"`` (:meth:`arena.strength.analysis.Analysis.to_json`) when done and
  ``"detail"`` on an error.  202 while running, 200 otherwise.

A ``POST`` that a browser marks as sent by another site (``Sec-Fetch-Site: cross-site`` or
``same-site``, the Fetch Metadata header every current browser sends) is a 403: the route takes
no CSRF token (it is anonymous), and another site's page could otherwise keep the queue busy
from its visitors' browsers, each address with its own share.  Clients that send no such header
(``curl``, scripts) are not affected.

Unknown matches and matches without a replay are 404, a damaged replay 422, all as JSON
``{"error", "detail", "status"}``.  Results are kept in memory (the most recent 32), keyed by the
match, the stored replay's sha256 and the evaluator: nothing is written anywhere, and a changed
replay or new weights are analysed afresh.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter, OrderedDict
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from arena.engine import ReplayError, replay
from arena.store.db import Database
from arena.store.tournaments import UnknownMatchError

from . import queries
from .connguard import client_address
from .problems import problem_json
from .replays import DamagedReplayError, replay_text

KEEP: Final = 32
CROSS_SITE: Final = frozenset({"cross-site", "same-site"})  # Sec-Fetch-Site values refused on POST
MAX_WAITING: Final = 8  # analyses queued or running at once
MAX_PER_ADDRESS: Final = 2  # of those, asked for by one address
RETRY_AFTER: Final = 30  # seconds, when the queue is full


class QueueFull(Exception):
    """No room for another analysis now; the message says why."""


Key = tuple[int, str, str]


class AnalysisJobs:
    """Analyses computed in one background thread and kept in memory (module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.lock = threading.Lock()
        self.done: OrderedDict[Key, dict[str, Any]] = OrderedDict()
        self.running: dict[Key, str] = {}  # queued or running -> the address that asked
        self.errors: dict[Key, str] = {}
        self._queue: queue.SimpleQueue[Key] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._evaluator: tuple[Any, str, frozenset[str]] | None = None

    def evaluator(self) -> tuple[Any, str, frozenset[str]]:
        """The default evaluator (loads the shipped weights once)."""
        if self._evaluator is None:
            from arena.strength.analysis import evaluator_by_name

            self._evaluator = evaluator_by_name("value")
        return self._evaluator

    def key(self, match_id: int) -> Key:
        """The cache key of a match's analysis; :class:`LookupError` when it has no replay."""
        info = queries.replay_info(self.db, match_id)
        if info is None:
            m = queries.get_match(self.db, match_id)
            if m is None:
                raise LookupError(f"there is no match {match_id}; see the matches list")
            raise LookupError(f"match {match_id} has no replay (status {m.status})")
        return (match_id, info[0], self.evaluator()[1])

    def status(self, key: Key) -> dict[str, Any]:
        """What is known about ``key`` now."""
        with self.lock:
            if key in self.done:
                self.done.move_to_end(key)
                return {"status": "done", "analysis": self.done[key]}
            if key in self.running:
                return {"status": "running"}
            if key in self.errors:
                return {"status": "error", "detail": self.errors[key]}
        return {"status": "none"}

    def start(self, key: Key, address: str = "") -> dict[str, Any]:
        """Queue ``key`` for analysis unless it is queued, running or done; the status after that.
        :class:`QueueFull` when :data:`MAX_WAITING` analyses wait already, or
        :data:`MAX_PER_ADDRESS` of them for ``address``."""
        with self.lock:
            if key not in self.done and key not in self.running:
                if len(self.running) >= MAX_WAITING:
                    raise QueueFull(f"{len(self.running)} analyses are waiting, the most at once")
                if Counter(self.running.values())[address] >= MAX_PER_ADDRESS:
                    raise QueueFull(
                        f"you have {MAX_PER_ADDRESS} analyses waiting, the most at once: wait for one"
                    )
                self.errors.pop(key, None)
                self.running[key] = address
                self._queue.put(key)
                if self._worker is None:
                    # a daemon thread: a server that stops does not wait for an analysis to finish
                    self._worker = threading.Thread(target=self._work, name="analysis", daemon=True)
                    self._worker.start()
        return self.status(key)

    def _work(self) -> None:
        while True:
            self._analyse(self._queue.get())

    def _analyse(self, key: Key) -> None:
        from arena.strength.analysis import analyse

        match_id = key[0]
        try:
            text = replay_text(self.db, match_id)
            rep = replay(text)
            m = queries.get_match(self.db, match_id)
            names = [s.bot for s in sorted(m.seats, key=lambda s: s.seat)] if m is not None else None
            if names is not None and len(names) != rep.states[0].players:
                names = None
            decide, label, skip = self.evaluator()
            result = analyse(rep, decide, label, match=match_id, seating=names, skip_phases=skip).to_json()
        except (ReplayError, DamagedReplayError, UnknownMatchError) as exc:
            with self.lock:
                self.errors[key] = str(exc)
                self.running.pop(key, None)
            return
        except Exception as exc:  # a bug: say so on the page rather than spin for ever
            with self.lock:
                self.errors[key] = f"{type(exc).__name__}: {exc}. This is a bug in Pool Arena."
                self.running.pop(key, None)
            return
        with self.lock:
            self.done[key] = result
            while len(self.done) > KEEP:
                self.done.popitem(last=False)
            self.running.pop(key, None)


def analysis_router(db: Database) -> APIRouter:
    """The analysis routes over ``db`` (module docstring)."""
    router = APIRouter()
    jobs = AnalysisJobs(db)

    def answer(match_id: int, start: bool, address: str = "") -> JSONResponse:
        try:
            key = jobs.key(match_id)
        except LookupError as exc:
            return problem_json(404, "Unknown match" if "no match" in str(exc) else "No replay", str(exc))
        except ValueError as exc:  # the weights cannot be loaded (WeightsError)
            return problem_json(503, "No evaluation", str(exc))
        try:
            body = jobs.start(key, address) if start else jobs.status(key)
        except QueueFull as exc:
            busy = f"{exc}; try again in {RETRY_AFTER} s"
            return problem_json(503, "Analyses busy", busy, {"Retry-After": str(RETRY_AFTER)})
        if body["status"] == "error" and "corrupt" in str(body.get("detail", "")):
            return problem_json(422, "Corrupt replay", str(body["detail"]))
        return JSONResponse(body, status_code=202 if body["status"] == "running" else 200)

    @router.post("/matches/{match_id}/analysis", include_in_schema=False)
    def start_analysis(match_id: int, request: Request) -> JSONResponse:
        if request.headers.get("sec-fetch-site", "same-origin") in CROSS_SITE:
            told = "analyses are started from this server's own pages"
            return problem_json(403, "Cross-site request", told)
        return answer(match_id, True, client_address(request))  # an IPv6 address: its /64

    @router.get("/matches/{match_id}/analysis", include_in_schema=False)
    def get_analysis(match_id: int) -> JSONResponse:
        return answer(match_id, False)

    return router
