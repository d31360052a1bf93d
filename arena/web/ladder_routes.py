"""The ladder on the web: ``/ladder`` (standings and matches in progress, updated in place) and
``/api/ladder`` (the same as JSON).  See :mod:`arena.ladder.board` for what is shown and how it
stays fast with 100,000 stored matches."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from arena.ladder.board import Board, ladder_board
from arena.store.db import Database

from .app import make_templates


def board_json(board: Board | None) -> dict[str, Any]:
    """The board as the API and the page's updater see it."""
    if board is None:
        return {"ladder": None, "rows": [], "running": [], "finished": 0}
    return {
        "ladder": board.tournament_id,
        "finished": board.finished,
        "min_games": board.min_games,
        "fit": {"current": board.fit_fresh, "matches": board.fit_matches},
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

    return router
