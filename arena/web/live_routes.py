"""Live matches on the web: ``/live/{id}`` (the replay viewer in live mode) and its event stream.

- ``GET /live/{id}``: the viewer with every step received so far; it follows the match as it
  is played (``viewer.js`` live mode) and offers the replay when it ends.  A finished match
  redirects to its replay page.
- ``GET /api/live/{id}/events?since=K``: server-sent events.  ``step`` messages carry the
  steps after ``K`` (``{"steps": [{"k", "event", "state", "ts"}]}``: the viewer's event and
  state formats, and when the referee applied each step); when the match is over, the steps the
  watcher has not seen yet come from the stored replay (``ts`` null), then ``end`` says where
  its replay is and each seat's place; a comment every :data:`KEEPALIVE` seconds keeps proxies
  from closing it.
- ``GET /api/live/{id}``: the steps so far as JSON (and whether the match is still running).

The events come from this process's :class:`arena.live.hub.LiveHub` (see :mod:`arena.live`); a
watcher that reads slowly or goes away costs the referee nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse

from arena.engine import new_game
from arena.engine.variants import by_version
from arena.live.channel import socket_path
from arena.live.hub import Feed, LiveHub, Step
from arena.live.remote import UDP_ENV, parse_bind
from arena.store.db import Database
from arena.store.models import Match, Tournament

from . import queries
from .app import Problem, make_templates
from .export import json_for_script
from .replays import load_view
from .viewdata import (
    FORMAT,
    FORMAT_VERSION,
    SECRET_SEED,
    board_data,
    exact_ints,
    rules_data,
    seating,
    state_view,
)

KEEPALIVE = 15.0
STATUS_EVERY = 1.0  # seconds between looks at the match's status while nothing arrives
SETTLE = 2.0  # seconds an ended match's stream waits for the hub to apply what it already received

log = logging.getLogger(__name__)


def start_hub(db: Database) -> LiveHub | None:
    """This process's hub on the database's live channel (None when it cannot be bound), and on
    the signed UDP endpoint ``$ARENA_LIVE_UDP`` names, if any (:mod:`arena.live.remote`)."""
    udp = os.environ.get(UDP_ENV, "").strip()
    try:
        hub = LiveHub(socket_path(db.url), parse_bind(udp) if udp else None).start()
    except (OSError, ValueError) as exc:
        log.warning("live matches are off: cannot bind %s%s: %s", socket_path(db.url),
                    f" and {udp}" if udp else "", exc)  # fmt: skip
        return None
    if hub.target is not None:
        log.info("live matches from other hosts: signed UDP on %s", hub.target.address)
    return hub


def _step_json(s: Step) -> dict[str, Any]:
    return {"k": s.k, "event": s.event, "state": s.state, "ts": s.ts}


def _rules_version(db: Database, m: Match) -> str:
    with db.session() as session:
        t = session.get(Tournament, m.tournament_id) if m.tournament_id is not None else None
        return (t.rules if t is not None else None) or "1"


def live_view(db: Database, row: queries.MatchRow, feed: Feed | None, steps: list[Step]) -> dict[str, Any]:
    """The viewer's data for a running match: every step received so far."""
    names = [s.bot for s in row.seats]
    if feed is not None:
        header = dict(feed.header)
        initial = feed.initial
    else:
        with db.session() as session:
            m = session.get(Match, row.id)
        rules = _rules_version(db, m) if m is not None else "1"
        header = {"rules": rules, "players": len(names), "seed": row.seed, "seating": names}
        initial = state_view(new_game(len(names), by_version(rules)))
    header["seed"] = row.public_seed or SECRET_SEED  # the seed would tell the dice still to come
    players = int(header["players"])
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "match": exact_ints(row.to_json()),
        "header": exact_ints(header),
        "players": players,
        "seating": seating(header, players),
        "rules": rules_data(by_version(str(header.get("rules", "1")))),
        "board": board_data(),
        "states": [initial, *(s.state for s in steps)],
        "events": [s.event for s in steps],
        "result": None,
        "forfeits": [],
    }


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def make_router(db: Database, hub: LiveHub | None) -> APIRouter:
    router = APIRouter()
    templates = make_templates()

    def match_or_404(match_id: int) -> queries.MatchRow:
        m = queries.get_match(db, match_id)
        if m is None:
            raise Problem(404, "Unknown match", f"there is no match {match_id}; see the matches list")
        return m

    def placings_of(match_id: int) -> list[int | None]:
        """Each seat's place in the ended match (None: not recorded, e.g. a failed match)."""
        row = queries.get_match(db, match_id)
        return [s.placing for s in sorted(row.seats, key=lambda s: s.seat)] if row is not None else []

    def status_of(match_id: int) -> str:
        with db.session() as session:
            m = session.get(Match, match_id)
            return m.status if m is not None else "unknown"

    @router.get("/live/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def live_page(request: Request, match_id: int) -> Response:
        row = match_or_404(match_id)
        if row.status in ("finished", "failed"):
            return RedirectResponse(f"/matches/{match_id}", status_code=303)
        feed, steps = hub.steps_since(match_id, 0) if hub is not None else (None, [])
        view = live_view(db, row, feed, steps)
        return templates.TemplateResponse(
            request,
            "live.html",
            {"m": row, "view": view, "data_json": json_for_script(view), "live_on": hub is not None,
             "since": len(steps), "nav": "ladder", "rules_url": "/rules"},
        )  # fmt: skip

    @router.get("/api/live/{match_id}", tags=["live"])
    def live_json(match_id: int, since: int = 0) -> Response:
        """The steps of a running match received so far (after ``since``)."""
        row = match_or_404(match_id)
        feed, steps = hub.steps_since(match_id, since) if hub is not None else (None, [])
        return JSONResponse(
            {"match": match_id, "status": row.status, "received": feed.count if feed else 0,
             "steps": [_step_json(s) for s in steps]}
        )  # fmt: skip

    @router.get("/api/live/{match_id}/events", tags=["live"])
    async def live_events(request: Request, match_id: int, since: int = 0) -> Response:
        """Server-sent events: the match's steps after ``since`` as they are played, then ``end``."""
        match_or_404(match_id)
        if hub is None:
            raise Problem(503, "Live matches are off", "this server could not open its live channel")
        loop = asyncio.get_running_loop()

        async def rest_of(sent: int) -> AsyncIterator[str]:
            """The steps after ``sent`` from the stored replay, once the match is finished (the
            last moves may still be on their way, or a datagram was lost after the last resync)."""
            try:
                _, view = await asyncio.to_thread(load_view, db, match_id)
            except Exception:  # no replay (a failed match): nothing more to show
                return
            events, states = view["events"], view["states"]
            if len(events) > sent:
                steps = [{"k": k, "event": events[k - 1], "state": states[k], "ts": None}
                         for k in range(sent + 1, len(events) + 1)]  # fmt: skip
                yield _sse("step", {"steps": steps})

        async def stream() -> AsyncIterator[str]:
            # registered here, not when the response is made: a client gone before the response
            # starts never runs this body, and a watcher made outside it would never be removed
            # (it would pin the match's feed in the hub for the life of the process)
            watcher = hub.watch(match_id, loop)
            sent = max(0, since)
            last_beat = last_status = time.monotonic()
            try:
                yield _sse("hello", {"match": match_id, "since": sent})
                while True:
                    watcher.clear()
                    feed, steps = await asyncio.to_thread(hub.steps_since, match_id, sent)  # built now
                    if feed is not None and feed.count < sent:  # the match started again
                        sent = 0
                        yield _sse("reset", {"match": match_id})
                        continue
                    if steps:
                        sent = steps[-1].k
                        yield _sse("step", {"steps": [_step_json(s) for s in steps]})
                    now = time.monotonic()
                    if now - last_status >= STATUS_EVERY:
                        last_status = now
                        status = await asyncio.to_thread(status_of, match_id)
                        if status not in ("running", "queued"):
                            # the events already received first (the hub may run behind the
                            # match on a loaded host), then what only the stored replay has
                            await asyncio.to_thread(hub.settle, SETTLE)
                            feed, steps = await asyncio.to_thread(hub.steps_since, match_id, sent)
                            if steps and (feed is None or feed.count >= sent):
                                sent = steps[-1].k
                                yield _sse("step", {"steps": [_step_json(s) for s in steps]})
                            async for rest in rest_of(sent):
                                yield rest
                            placings = await asyncio.to_thread(placings_of, match_id)
                            yield _sse("end", {"status": status, "url": f"/matches/{match_id}",
                                               "placings": placings})  # fmt: skip
                            return
                    if now - last_beat >= KEEPALIVE:
                        last_beat = now
                        yield ": keepalive\n\n"
                    if await request.is_disconnected():
                        return
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(watcher.wake.wait(), timeout=STATUS_EVERY)
            finally:
                hub.unwatch(watcher)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    return router
