"""A rating system is one place (issue 14): the registry in ``arena/ratings/systems.py``.

A toy system ("wins": the share of games won, ranked by it) is registered at run time in this
test only -- no other module is touched -- and must then be rated by ``rate()``, rendered by the
leaderboard (terminal, Markdown, published JSON), accepted by ``arena leaderboard --system wins``
and offered by the web page and API; once unregistered, every one of them refuses it and names
the registered systems. The results are stored in a real SQLite file through the store's API, the
CLI runs in-process, the web app behind a real socket."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from arena.endings import win_share
from arena.leaderboard import headers, leaderboard, render, to_json, to_markdown
from arena.ratings import (
    DEFAULT_SYSTEM,
    RATING_SYSTEMS,
    DuplicateRatingSystemError,
    GameResult,
    RateSettings,
    Rating,
    RatingError,
    RatingSystem,
    UnknownRatingSystemError,
    get_system,
    rate,
    register,
    system_names,
    unregister,
)
from arena.store.db import Database
from arena.store.results import game_results
from arena.web.app import create_app
from arena.web.server import BackgroundServer

from .conftest import store_games
from .test_leaderboard import field_games

BUILT_IN = ("pl", "elo", "openskill")
TITLE = "Win share (percent of games won, a shared first place split), no interval; ranked by the share"


def win_shares(games: Sequence[GameResult], settings: RateSettings) -> list[Rating]:
    """The toy system: 100 x wins / games, no interval (so it is ranked by the share itself)."""
    won: defaultdict[str, float] = defaultdict(float)
    played: defaultdict[str, int] = defaultdict(int)
    for g in games:
        for seat, bot in enumerate(g.players):
            won[bot] += win_share(g.placings, seat)
            played[bot] += 1
    return [Rating(bot, 100.0 * won[bot] / n, math.nan, math.nan, n, "wins") for bot, n in played.items()]


WINS = RatingSystem(
    name="wins",
    label="Win share",
    title=TITLE,
    rating_label="won %",
    ranked_by_label="share",
    decimals=1,
    rate=win_shares,
)


@pytest.fixture
def wins() -> Iterator[RatingSystem]:
    """The toy system, registered for one test and unregistered after it."""
    register(WINS)
    try:
        yield WINS
    finally:
        unregister("wins")


def cli(home: Path, db: Database, *args: str) -> tuple[int, str]:
    from arena.cli.main import app

    env = {"ARENA_HOME": str(home), "ARENA_DATABASE_URL": db.url, "COLUMNS": "200"}
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout + result.stderr


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def test_a_registered_system_is_rated_and_shown_everywhere(
    wins: RatingSystem, db: Database, home: Path
) -> None:
    store_games(db, field_games())
    assert system_names() == (*BUILT_IN, "wins")

    # rate(): the registry's function, best first by the share (no interval: the point estimate)
    rows = rate(game_results(db, None), "wins")
    assert [r.bot for r in rows] == ["greedy", "invader", "random", "newbie"]
    assert rows[0].rating == pytest.approx(90.0) and rows[0].conservative == rows[0].rating  # 54 of 60

    # the leaderboard: its columns, decimals and title, from the registry entry
    board = leaderboard(db, system="wins")
    ranks = [(1, "greedy"), (2, "invader"), (3, "random"), (None, "newbie")]
    assert [(r.rank, r.bot) for r in board] == ranks
    assert all(r.lo is None and r.hi is None for r in board)  # no interval: "not measurable"
    assert headers("wins") == [
        "#", "bot", "won %", "95% interval", "share", "games", "wins", "mean score", "timeouts", "forfeits",
    ]  # fmt: skip
    console = Console(width=200, record=True)
    console.print(render(board, "wins", "All matches"))
    text = console.export_text()
    assert TITLE in text and "won %" in text and "90.0" in text

    md = to_markdown(board, "wins", "Wins")
    assert f"Rating: {TITLE}." in md
    assert "| # | bot | won % | 95% interval | share | games |" in md
    assert "| 1 | greedy | 90.0 | not measurable | 90.0 | 60 |" in md  # ranked: not "too few games"

    js = json.loads(json.dumps(to_json(board, "wins", {"leaderboard": "toy"})))
    assert js["system"] == "wins" and js["ranking"] == TITLE
    assert [r["bot"] for r in js["rows"]] == ["greedy", "invader", "random", "newbie"]
    assert js["rows"][0]["rating"] == pytest.approx(90.0)

    # the CLI: --system takes it, and the help offers it
    code, out = cli(home, db, "leaderboard", "--system", "wins")
    assert code == 0, out
    assert TITLE in out and "won %" in out and "share" in out
    assert "│ 1 │ greedy " in out and "90.0" in out
    from arena.cli.leaderboard_cmd import systems_help

    assert systems_help() == "pl (default), elo, openskill or wins"

    # the web page and API
    with BackgroundServer(create_app(db)) as site:
        status, page = get(f"{site}/leaderboard?system=wins")
        assert status == 200, page
        assert 'data-system="wins">Win share</a>' in page
        assert "<th>won %</th><th>95% interval</th><th>share</th>" in page
        assert "<b>90.0</b>" in page and TITLE in page
        status, body = get(f"{site}/api/leaderboard?system=wins")
        assert status == 200, body
        api = json.loads(body)
        assert api["title"] == TITLE and api["rows"][0]["bot"] == "greedy"
        status, page = get(f"{site}/leaderboard?system=elo")
        assert status == 200 and 'data-system="wins">Win share</a>' in page  # offered on every tab


def test_an_unregistered_system_is_refused_everywhere(db: Database, home: Path) -> None:
    store_games(db, field_games()[:3])
    register(WINS)
    unregister("wins")
    expected = "unknown rating system 'wins'; choose from pl, elo, openskill"
    assert system_names() == BUILT_IN
    with pytest.raises(UnknownRatingSystemError, match=expected):
        rate(game_results(db, None), "wins")
    with pytest.raises(UnknownRatingSystemError, match=expected):
        leaderboard(db, system="wins")
    code, out = cli(home, db, "leaderboard", "--system", "wins")
    assert code == 2 and "Invalid value for --system: choose from pl, elo, openskill" in out, out
    with BackgroundServer(create_app(db)) as site:
        status, body = get(f"{site}/api/leaderboard?system=wins")
    assert status == 400 and expected in json.loads(body)["detail"]


def test_the_registry_refuses_what_would_break_it() -> None:
    assert DEFAULT_SYSTEM == "pl" and tuple(RATING_SYSTEMS) == BUILT_IN
    assert [get_system(n).decimals for n in BUILT_IN] == [0, 0, 1]
    with pytest.raises(DuplicateRatingSystemError, match="'elo' is registered already"):
        register(RatingSystem("elo", "x", "x", "x", "x", 0, win_shares))
    with pytest.raises(RatingError, match="default rating system 'pl' cannot be unregistered"):
        unregister("pl")
    with pytest.raises(UnknownRatingSystemError, match="choose from pl, elo, openskill"):
        unregister("glicko")
    for bad in ("Wins", "", "1x", "a" * 17, "win share"):
        with pytest.raises(ValueError, match="is not valid"):
            RatingSystem(bad, "x", "x", "x", "x", 0, win_shares)
    with pytest.raises(ValueError, match=r"decimals must be 0\.\.6"):
        RatingSystem("x", "x", "x", "x", "x", -1, win_shares)
    assert tuple(RATING_SYSTEMS) == BUILT_IN


def test_rate_refuses_rows_of_another_system() -> None:
    def wrong(games: Sequence[GameResult], settings: RateSettings) -> list[Rating]:
        return [Rating("a", 1.0, math.nan, math.nan, 1, "pl")]

    register(RatingSystem("wrong", "Wrong", "wrong", "r", "r", 0, wrong))
    try:
        with pytest.raises(RatingError, match="'wrong' returned a row of system 'pl'"):
            rate([GameResult(("a", "b"), (1, 2), (3.0, 1.0))], "wrong")
    finally:
        unregister("wrong")
