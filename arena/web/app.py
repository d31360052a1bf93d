"""The FastAPI app: leaderboard, tournaments, matches and the replay viewer, as pages and as JSON.

Pages are Jinja2 templates; ``/api/...`` returns the same data as JSON.  Every expected failure
is a clear page (or JSON ``{"error", "detail", "status"}``): unknown ids are 404, bad filters
400, a damaged replay 422 (the server is fine, the stored record is not), a database that cannot
be reached 503.  Nothing expected is a 500.
"""

from __future__ import annotations

import atexit
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.endings import (
    UnknownEnding,
    by_forfeit,
    is_forfeit,
    parse_termination_filter,
    seat_label,
    termination_word,
    wins_text,
)
from arena.leaderboard import LeaderRow, leaderboard
from arena.ratings import DEFAULT_SYSTEM, RATING_SYSTEMS, get_system, system_names
from arena.ratings.errors import RatingError, UnknownRatingSystemError
from arena.rulesdoc import BOARD_SVG, RULES_MD
from arena.store.crosstable import cross_table
from arena.store.db import Database, DatabaseDamagedError, NulInTextError, NumberOutOfRangeError
from arena.store.tournaments import UnknownMatchError
from arena.tournament.pull import ranked_versions
from arena.tournament.pull import report as format_report

from . import queries
from .apidocs import api_docs_html
from .boards import LeaderboardCache
from .export import STATIC, TEMPLATES, json_for_script, standalone_html
from .head import HeadAsGet
from .privacy import public_jsonl, public_row, public_view, viewer_keep
from .problems import is_api, problem
from .queries import FilterError, MatchFilters, MatchRow, Page
from .replays import DamagedReplayError, load_view
from .rulespage import RulesMissingError, rules_html
from .viewdata import board_data


class Problem(Exception):
    """An expected failure of a request: its HTTP status, a title and what to do."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        self.status = status
        self.title = title
        self.detail = detail
        super().__init__(detail)


def make_templates() -> Jinja2Templates:
    """The Jinja2 environment with the helpers the templates use."""
    templates = Jinja2Templates(directory=str(TEMPLATES))
    env = templates.env
    env.filters["iso"] = queries.iso
    env.filters["when"] = lambda d: "" if d is None else d.strftime("%Y-%m-%d %H:%M:%S")
    env.filters["secs"] = lambda s: "" if s is None else f"{float(s):.1f} s"
    env.filters["wins"] = wins_text  # a win count: whole, or with shares of a shared first place
    env.globals["is_forfeit"] = is_forfeit  # the seat forfeited (a Reason), from the one vocabulary
    env.globals["by_forfeit"] = by_forfeit  # it forfeited, or won because the others did
    env.globals["seat_label"] = seat_label  # "won by forfeit", "forfeited (crashed)", ...
    env.globals["termination_word"] = termination_word  # "finished" for normal, as tables show it
    env.globals["rating_systems"] = RATING_SYSTEMS  # the registry: labels, headers, decimals
    env.filters["minus"] = lambda text: text.replace(" - ", " \u2212 ")  # "mu - 3 sigma" set in type
    return templates


class _Cache:
    """A small thread-safe LRU for computed values (leaderboards, viewer data)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        value = compute()
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value


def _int(
    value: str | None, name: str, *, default: int | None = None, minimum: int | None = None
) -> int | None:
    if value is None or value.strip() == "":
        return default
    try:
        n = int(value)
    except ValueError:
        raise Problem(400, "Bad request", f"{name} must be a whole number, got {value!r}") from None
    if minimum is not None and n < minimum:
        raise Problem(400, "Bad request", f"{name} must be at least {minimum}, got {n}")
    return n


def _page_args(page: str | None, per_page: str | None, default_per_page: int = 50) -> tuple[int, int]:
    p = _int(page, "page", default=1, minimum=1) or 1
    pp = _int(per_page, "per_page", default=default_per_page, minimum=1) or default_per_page
    if pp > queries.MAX_PER_PAGE:
        raise Problem(400, "Bad request", f"per_page must be at most {queries.MAX_PER_PAGE}, got {pp}")
    return p, pp


def _system(value: str | None) -> str:
    system = value or DEFAULT_SYSTEM
    try:
        get_system(system)
    except UnknownRatingSystemError as exc:
        raise Problem(400, "Bad request", str(exc)) from None
    return system


def _filters(request: Request) -> MatchFilters:
    q = request.query_params
    status = q.get("status") or "finished"
    ending = (q.get("termination") or "").strip() or None
    try:
        since = queries.parse_day(q.get("since"), "since")
        until = queries.parse_day(q.get("until"), "until")
        if since is not None and until is not None and since > until:  # (as arena replays list)
            raise FilterError(f"since {since} is after until {until}: no day is in both")
        return MatchFilters(
            tournament=_int(q.get("tournament"), "tournament"),
            bot=(q.get("bot") or "").strip() or None,
            termination=None if ending is None else str(parse_termination_filter(ending)),
            status=None if status == "all" else status,
            since=since,
            until=until,
        )
    except (FilterError, UnknownEnding) as exc:
        raise Problem(400, "Bad filter", str(exc)) from None


def _page_links(page: Page[Any], base: str, args: dict[str, str]) -> dict[str, str | None]:
    def link(p: int) -> str:
        return f"{base}?{urlencode({**args, 'page': str(p), 'per_page': str(page.per_page)})}"

    # a page past the end (an old link, a typed number): its "prev" and "last" lead to the last
    # page there is, not to the page before the one asked for
    return {
        "first": link(1) if page.page > 1 else None,
        "prev": link(min(page.page - 1, page.pages)) if page.page > 1 else None,
        "next": link(page.page + 1) if page.page < page.pages else None,
        "last": link(page.pages) if page.page != page.pages else None,
    }


def create_app(db: Database, *, live: bool = True) -> FastAPI:
    """The web app over an open database (read-only use).  ``live=False`` opens no live channel
    (``arena play``: its own game is on its page; the ladder's live matches are left to the
    ``arena web`` or ``arena serve`` of the database, which may hold the channel already)."""
    app = FastAPI(
        title="Pool Arena",
        description="Leaderboard, tournaments, matches and replays of Cool am Pool bot matches.",
        docs_url=None,  # FastAPI's page loads Swagger UI from a CDN: our own, below
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )

    @app.get("/api/docs", include_in_schema=False, response_class=HTMLResponse)
    def api_docs() -> HTMLResponse:
        return HTMLResponse(api_docs_html(app.openapi()))

    app.add_middleware(GZipMiddleware, minimum_size=2000)
    app.add_middleware(HeadAsGet)  # every GET route (pages, API, streams) answers HEAD too
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    templates = make_templates()
    boards = LeaderboardCache(db, lambda tid, sys_: leaderboard(db, tournament_id=tid, system=sys_))
    views = _Cache(8)

    def page(request: Request, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, context, status_code=code)

    def problem_response(request: Request, status: int, title: str, detail: str) -> Response:
        return problem(templates, request, status, title, detail, api=is_api(request))

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> Response:
        return problem_response(request, exc.status, exc.title, exc.detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return problem_response(request, 404, "Not found", f"there is no page at {request.url.path}")
        response = problem_response(request, exc.status_code, "Request failed", str(exc.detail))
        for name, value in (exc.headers or {}).items():  # e.g. a 405's Allow (RFC 9110 15.5.6)
            response.headers[name] = value
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        if any(e["loc"] and e["loc"][0] == "path" for e in errors):
            return problem_response(request, 404, "Not found", f"there is no page at {request.url.path}")
        text = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
        return problem_response(request, 400, "Bad request", text)

    @app.exception_handler(DatabaseDamagedError)
    async def _db_damaged(request: Request, exc: DatabaseDamagedError) -> Response:
        return problem_response(request, 503, "Database damaged", str(exc))

    @app.exception_handler(OperationalError)
    async def _db_down(request: Request, exc: OperationalError) -> Response:
        return problem_response(
            request, 503, "Database unavailable", f"the database cannot be read: {exc.orig}"
        )

    @app.exception_handler(NumberOutOfRangeError)
    async def _out_of_range(request: Request, exc: NumberOutOfRangeError) -> Response:
        # every route at once: an id (path or query) beyond the database's integers names nothing
        # (PostgreSQL's INTEGER ids end at 2**31 - 1 and it answered 500 "Internal error" for
        # /matches/3000000000; SQLite's end at 2**63 - 1, where Python's OverflowError did the same)
        return problem_response(
            request, 404, "Not found", f"there is no page at {request.url.path} (a number out of range)"
        )

    @app.exception_handler(NulInTextError)
    async def _nul(request: Request, exc: NulInTextError) -> Response:
        # PostgreSQL's text holds no NUL: /bots/a%00b/charts or /api/matches?bot=a%00b name
        # nothing (they answered 500 "Internal error" there; SQLite found no such bot)
        return problem_response(
            request, 404, "Not found", f"there is no page at {request.url.path} (text with a NUL character)"
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        # a bug, not bad input: still a clear page (the traceback goes to the server's log)
        return problem_response(
            request, 500, "Internal error", f"{type(exc).__name__}: {exc}. This is a bug in Pool Arena."
        )

    def get_leaderboard(tournament_id: int | None, system: str) -> list[LeaderRow]:
        answer = boards.get(tournament_id, system)  # never waits for a big refit (arena/web/boards.py)
        if isinstance(answer.error, RatingError | ValueError):
            raise Problem(422, "Cannot compute the ratings", str(answer.error))
        if answer.error is not None:
            raise answer.error
        return answer.rows

    def match_or_404(match_id: int) -> MatchRow:
        m = queries.get_match(db, match_id)
        if m is None:
            raise Problem(404, "Unknown match", f"there is no match {match_id}; see the matches list")
        return m

    def view_of(match_id: int) -> tuple[MatchRow, dict[str, Any]]:
        info = queries.replay_info(db, match_id)
        if info is None:
            m = match_or_404(match_id)
            raise Problem(404, "No replay", f"match {match_id} has no replay (status {m.status})")
        try:
            result: tuple[MatchRow, dict[str, Any]] = views.get(
                (match_id, *info, queries.seed_secret(db, match_id)), lambda: load_view(db, match_id)
            )
        except UnknownMatchError as exc:
            raise Problem(404, "Unknown match", str(exc)) from None
        except DamagedReplayError as exc:
            detail = f"{exc} — check it with 'arena replays verify {match_id}'."
            raise Problem(422, "Corrupt replay", detail) from None
        return result

    def tournament_or_404(tournament_id: int) -> queries.TournamentRow:
        t = queries.get_tournament(db, tournament_id)
        if t is None:
            raise Problem(404, "Unknown tournament", f"there is no tournament {tournament_id}")
        return t

    def list_page(filters: MatchFilters, p: int, pp: int, request: Request) -> Page[MatchRow]:
        try:
            found = queries.list_matches(db, filters, page=p, per_page=pp)
        except FilterError as exc:
            raise Problem(400, "Bad filter", exc.fact) from None
        keep = viewer_keep(request)  # arena serve: a bot's stderr line only for its owner (privacy.py)
        return found if keep is None else replace(found, items=[public_row(m, keep) for m in found.items])

    from .analysis_routes import analysis_router

    app.include_router(analysis_router(db))  # /matches/{id}/analysis (arena/strength/analysis.py)
    from . import ladder_routes, live_routes

    app.state.live_hub = live_routes.start_hub(db) if live else None  # the ladder's live events
    if app.state.live_hub is not None:  # its socket file goes with the process (the servers of
        atexit.register(app.state.live_hub.close, wait=False)  # arena/web/server.py close it
    # when they stop; a kill -9 leaves it, and the next hub of this database replaces it)
    app.include_router(ladder_routes.make_router(db))  # /ladder, /api/ladder, /bots/{name}/charts
    app.include_router(live_routes.make_router(db, app.state.live_hub))  # /live/{id} and its stream

    # ---- pages ----------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/leaderboard", status_code=307)

    @app.get("/leaderboard", response_class=HTMLResponse, include_in_schema=False)
    def leaderboard_page(
        request: Request, system: str | None = None, tournament: str | None = None
    ) -> Response:
        sys_ = _system(system)
        tid = _int(tournament, "tournament")
        t = tournament_or_404(tid) if tid is not None else None
        rows = get_leaderboard(tid, sys_)
        return page(
            request,
            "leaderboard.html",
            rows=rows,
            system=sys_,
            systems=system_names(),
            system_title=get_system(sys_).title,
            tournament=t,
            nav="leaderboard",
            board_note=boards.get(tid, sys_).note,
        )

    @app.get("/tournaments", response_class=HTMLResponse, include_in_schema=False)
    def tournaments_page(request: Request) -> Response:
        p, pp = _page_args(request.query_params.get("page"), request.query_params.get("per_page"))
        result = queries.list_tournaments(db, page=p, per_page=pp)
        return page(
            request,
            "tournaments.html",
            result=result,
            links=_page_links(result, "/tournaments", {}),
            nav="tournaments",
        )

    @app.get("/tournaments/{tournament_id}", response_class=HTMLResponse, include_in_schema=False)
    def tournament_page(request: Request, tournament_id: int, system: str | None = None) -> Response:
        t = tournament_or_404(tournament_id)
        sys_ = _system(system)
        p, pp = _page_args(request.query_params.get("page"), request.query_params.get("per_page"))
        filters = MatchFilters(tournament=tournament_id, status=None)
        matches = list_page(filters, p, pp, request)
        return page(
            request,
            "tournament.html",
            t=t,
            cross=cross_table(db, tournament_id, ranked_versions(db, tournament_id)),
            standing=format_report(db, tournament_id),
            rows=get_leaderboard(tournament_id, sys_),
            system=sys_,
            systems=system_names(),
            system_title=get_system(sys_).title,
            matches=matches,
            links=_page_links(matches, f"/tournaments/{tournament_id}", {"system": sys_}),
            nav="tournaments",
        )

    @app.get("/matches", response_class=HTMLResponse, include_in_schema=False)
    def matches_page(request: Request) -> Response:
        filters = _filters(request)
        p, pp = _page_args(request.query_params.get("page"), request.query_params.get("per_page"))
        result = list_page(filters, p, pp, request)
        args = filters.query_args()
        return page(
            request,
            "matches.html",
            result=result,
            filters=filters,
            links=_page_links(result, "/matches", args),
            bots=queries.bot_names(db),
            terminations=[(termination_word(t), t) for t in queries.terminations(db)],  # (word, value)
            statuses=queries.STATUSES,
            nav="matches",
        )

    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match_page(request: Request, match_id: int) -> Response:
        keep = viewer_keep(request)
        m = public_row(match_or_404(match_id), keep)
        if m.status != "finished":
            return page(request, "match.html", m=m, view=None, data_json="", nav="matches")
        m, view = view_of(match_id)
        view, m = public_view(view, m, keep), public_row(m, keep)
        return page(
            request,
            "match.html",
            m=m,
            view=view,
            data_json=json_for_script(view),
            nav="matches",
            rules_url="/rules",
        )

    @app.get("/rules", response_class=HTMLResponse, include_in_schema=False)
    def rules_page(request: Request) -> Response:
        try:
            html = rules_html(RULES_MD)
        except RulesMissingError as exc:
            raise Problem(404, "No rules document", str(exc)) from None
        return page(request, "rules.html", html=html, nav="rules")

    @app.get("/rules/board.svg", include_in_schema=False)
    def rules_board() -> Response:
        if not BOARD_SVG.is_file():
            raise Problem(404, "No board diagram", f"{BOARD_SVG} is missing: run python scripts/board_svg.py")
        return Response(BOARD_SVG.read_bytes(), media_type="image/svg+xml")

    @app.get("/matches/{match_id}/export.html", include_in_schema=False)
    def match_export(request: Request, match_id: int) -> HTMLResponse:
        _m, view = view_of(match_id)
        view = public_view(view, _m, viewer_keep(request))
        html = standalone_html(view, f"Pool Arena — match {match_id}")
        headers = {"Content-Disposition": f'attachment; filename="match-{match_id}.html"'}
        return HTMLResponse(html, headers=headers)

    # ---- JSON API -------------------------------------------------------------------------

    @app.get("/api/leaderboard")
    def api_leaderboard(system: str | None = None, tournament: str | None = None) -> dict[str, Any]:
        """The leaderboard (all finished matches, or one tournament's) in one rating system."""
        sys_ = _system(system)
        tid = _int(tournament, "tournament")
        if tid is not None:
            tournament_or_404(tid)
        rows = get_leaderboard(tid, sys_)
        return {
            "system": sys_,
            "title": get_system(sys_).title,
            "tournament": tid,
            "rows": [asdict(r) for r in rows],
        }

    @app.get("/api/tournaments")
    def api_tournaments(page: str | None = None, per_page: str | None = None) -> dict[str, Any]:
        """Tournaments, newest first, paged."""
        p, pp = _page_args(page, per_page)
        result = queries.list_tournaments(db, page=p, per_page=pp)
        return _page_json(result, [t.to_json() for t in result.items])

    @app.get("/api/tournaments/{tournament_id}")
    def api_tournament(tournament_id: int, system: str | None = None) -> dict[str, Any]:
        """One tournament with its standings."""
        t = tournament_or_404(tournament_id)
        sys_ = _system(system)
        return {**t.to_json(), "standings": [asdict(r) for r in get_leaderboard(tournament_id, sys_)]}

    @app.get("/api/matches")
    def api_matches(request: Request) -> dict[str, Any]:
        """Matches, newest first; filters tournament, bot, termination, status, since, until; paged."""
        filters = _filters(request)
        p, pp = _page_args(request.query_params.get("page"), request.query_params.get("per_page"))
        result = list_page(filters, p, pp, request)
        return {**_page_json(result, [m.to_json() for m in result.items]), "filters": filters.query_args()}

    @app.get("/api/matches/{match_id}")
    def api_match(request: Request, match_id: int) -> dict[str, Any]:
        """One match with its seats."""
        m = public_row(match_or_404(match_id), viewer_keep(request))
        info = queries.replay_info(db, match_id)
        return {**m.to_json(), "replay": None if info is None else {"sha256": info[0], "size": info[1]}}

    @app.get("/api/matches/{match_id}/replay")
    def api_replay(request: Request, match_id: int) -> Response:
        """Every state (engine snapshots) and every event of the match's replay."""
        _m, view = view_of(match_id)
        view = public_view(view, _m, viewer_keep(request))
        return Response(json.dumps(view, separators=(",", ":")), media_type="application/json")

    @app.get("/api/matches/{match_id}/replay.jsonl")
    def api_replay_jsonl(request: Request, match_id: int) -> Response:
        """The stored game record (JSON Lines), as recorded."""
        stored = queries.stored_replay(db, match_id)
        if stored is None:
            match_or_404(match_id)
            raise Problem(404, "No replay", f"match {match_id} has no replay")
        try:
            text = queries.unpack(stored)
        except queries.ReplayDamage as exc:
            raise Problem(
                422, "Corrupt replay", f"the replay of match {match_id} is corrupt: {exc}"
            ) from None
        keep = viewer_keep(request)
        if keep is not None:
            text = public_jsonl(text, match_or_404(match_id), keep)
        return Response(text, media_type="application/x-ndjson")

    @app.get("/api/board")
    def api_board() -> dict[str, Any]:
        """The static board: colours, zones, loungers, the lifeguard's track."""
        return board_data()

    return app


def _page_json(page: Page[Any], items: list[Any]) -> dict[str, Any]:
    return {
        "page": page.page,
        "per_page": page.per_page,
        "total": page.total,
        "pages": page.pages,
        "items": items,
    }


__all__ = ["Problem", "create_app"]
