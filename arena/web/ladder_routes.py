"""The ladder on the web: ``/ladder`` (standings and matches in progress, updated in place),
``/api/ladder`` (the same as JSON) and ``/bots/{name}/charts`` (a bot's charts, server-side SVG,
:mod:`arena.web.charts`).  See :mod:`arena.ladder.board` for what is shown and how it stays
fast with 100,000 stored matches."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from arena.ladder.board import Board, ladder_board
from arena.ladder.field import find_ladder
from arena.ladder.ratings import rating_history
from arena.ladder.stats import by_seat, head_to_head, per_day, version_results
from arena.store.bots import UnknownBotError, resolve_version
from arena.store.db import Database

from .app import Problem, make_templates
from .charts import bar_chart, histogram, matrix_chart, rating_chart


def board_json(board: Board | None) -> dict[str, Any]:
    """The board as the API and the page's updater see it."""
    if board is None:
        return {"ladder": None, "rows": [], "running": [], "finished": 0}
    return {
        "ladder": board.tournament_id,
        "finished": board.finished,
        "min_games": board.min_games,
        "fit": {
            "current": board.fit_fresh,
            "matches": board.fit_matches,
            "ladder_running": board.ladder_running,
        },
        "rows": [
            {
                "rank": r.rank,
                "bot": r.bot,
                "version_id": r.version_id,
                "conservative": round(r.conservative, 3),
                "mu": round(r.mu, 3),
                "sigma": round(r.sigma, 3),
                "games": r.games,
                "active": r.active,
                "pl": None if r.pl is None else [None if x is None else round(x, 1) for x in r.pl],
            }
            for r in board.rows
        ],
        "running": [
            {
                "match": m.match_id,
                "bots": list(m.bots),
                "started_at": m.started_at.isoformat() if m.started_at else None,
                "url": f"/live/{m.match_id}",
            }
            for m in board.running
        ],
    }


def make_router(db: Database) -> APIRouter:
    router = APIRouter()
    templates = make_templates()

    @router.get("/ladder", response_class=HTMLResponse, include_in_schema=False)
    def ladder_page(request: Request) -> Response:
        board = ladder_board(db)
        return templates.TemplateResponse(
            request, "ladder.html", {"board": board, "data": board_json(board), "nav": "ladder"}
        )

    @router.get("/api/ladder", tags=["ladder"])
    def ladder_api() -> Response:
        """The ladder's standings (OpenSkill mu - 3 sigma; provisional bots have rank null), the
        cached Plackett-Luce table, and the matches in progress (with their live pages)."""
        return JSONResponse(board_json(ladder_board(db)), headers={"Cache-Control": "no-store"})

    @router.get("/bots/{ref}/charts", response_class=HTMLResponse, include_in_schema=False)
    def bot_charts(request: Request, ref: str) -> Response:
        try:
            version = resolve_version(db, ref)
        except UnknownBotError as exc:
            raise Problem(404, "Unknown bot", str(exc)) from None
        assert version.id is not None
        return templates.TemplateResponse(
            request,
            "ladder_bot.html",
            {"ref": ref, "charts": bot_charts_svg(db, version.id, ref), "nav": "ladder"},
        )

    return router


H2H_TOP = 8
CHART_POINTS = 200
_h2h_cache: dict[tuple[str, int], tuple[float, str]] = {}
H2H_TTL = 10.0  # seconds a head-to-head matrix is reused (it reads the ladder's last matches)


def bot_charts_svg(db: Database, version_id: int, label: str) -> dict[str, str]:
    """The bot page's charts, as SVG strings by name."""
    results = version_results(db, version_id)
    points = rating_history(db, [version_id])
    points = points[:: max(1, len(points) // CHART_POINTS)] + points[-1:]  # at most ~CHART_POINTS
    seats = by_seat(results)
    days = per_day(results)
    out = {
        "rating": rating_chart([p.games for p in points], [p.mu for p in points], [p.sigma for p in points],
                               title=f"{label}: ladder rating over time"),
        "scores": histogram([r.score for r in results], title=f"Final scores ({len(results)} games)",
                            xlabel="points"),
        "seats": bar_chart([s[0] for s in seats], [s[1] for s in seats],
                           title="First places by table and seat", ylabel="win share", ymax=1.0,
                           notes=[f"{s[0]}: {s[1]:.0%} of {s[2]} games" for s in seats]),
        "days": bar_chart([d.strftime("%m-%d") for d, _ in days], [float(n) for _, n in days],
                          title="Games per day", ylabel="games"),
    }  # fmt: skip
    out["h2h"] = _h2h(db)
    return out


def _h2h(db: Database) -> str:
    ladder = find_ladder(db)
    if ladder is None or ladder.id is None:
        return matrix_chart([], [], [], title="Head to head: the top ladder bots")
    key = (db.url, ladder.id)
    cached = _h2h_cache.get(key)
    if cached is not None and time.monotonic() - cached[0] < H2H_TTL:
        return cached[1]
    board = ladder_board(db)
    rows = [r for r in (board.rows if board else []) if r.games > 0][:H2H_TOP]
    share, met = head_to_head(db, ladder.id, [r.version_id for r in rows])
    svg = matrix_chart([r.bot for r in rows], share, met, title="Head to head: the top ladder bots")
    _h2h_cache[key] = (time.monotonic(), svg)
    return svg
