"""Leaderboards: ratings (recomputed from stored results) joined with per-bot statistics.

How a leaderboard ranks (the same in ``arena leaderboard``, tournament results, published
leaderboards and the web app):

- **Conservatively.** Bots are ranked by a value they are fairly sure to deserve, not by the
  point estimate: the 95% interval's lower bound for Plackett-Luce and Elo, ``mu - 3 sigma`` for
  OpenSkill (:attr:`arena.ratings.Rating.conservative`).  A bot known from a few lucky games
  then does not outrank one known from many.
- **Provisional bots apart.** A bot with fewer than ``min_games`` games (default
  :data:`MIN_GAMES`) is not ranked: it is listed separately as provisional.
- **Each system on its own scale.** Plackett-Luce and Elo ratings are on an Elo-like scale
  (1500 = the mean bot / the start); OpenSkill shows ``mu`` on its own scale (start 25). Each
  system's title, column headers and decimals come from its entry in the registry,
  :mod:`arena.ratings.systems`; every function here that takes a ``system`` name reads it there
  (an unregistered name raises :class:`~arena.ratings.UnknownRatingSystemError`).
- **No interval of zero width.** An interval narrower than the last shown digit (``lo``/``hi`` None)
  is shown as "too few games" for a provisional bot (too few games, or duplicate-dice groups, to
  resample) and as "not measurable" for a ranked one (every resample gives the same value, or a
  system without intervals), and so is the interval of a one-sided record (every game won
  outright, or every game behind every other seat: only the prior bounds its rating on that side,
  and its resamples spread a little wider than the last digit: ``2176 .. 2178`` for a bot that won
  95 of 95 games).
- **Removed bots** (``arena bots remove``) are hidden from the all-matches leaderboard, but stay
  in a tournament's standings (history, marked removed) and in the rating history; their games
  still count for their opponents' ratings.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from arena.endings import wins_text
from arena.ratings import Rating, get_system, rate
from arena.ratings.rating import shown_interval
from arena.store.bots import version_names
from arena.store.db import Database
from arena.store.models import RatingRow
from arena.store.results import BotStats, bot_stats, finished_matches, game_results

MIN_GAMES = 10
"""Games a bot needs before it is ranked; with fewer it is listed as provisional."""

TOO_FEW = "too few games"
NOT_MEASURABLE = "not measurable"


@dataclass(frozen=True)
class LeaderRow:
    """One line of a leaderboard.

    ``rank`` is the place among ranked bots, None for a provisional bot (fewer than the minimum of
    games).  ``rating`` is the point estimate on the system's own scale; ``lo`` .. ``hi`` its 95%
    interval, None when it has no width (too few games); ``conservative`` the value the ranking
    sorts by (see the module docstring).
    """

    rank: int | None
    bot: str
    rating: float
    lo: float | None
    hi: float | None
    conservative: float
    games: int
    wins: float  # arena.endings.win_share summed: a first place shared by k seats counts 1/k
    mean_score: float
    timeouts: int
    forfeits: int
    provisional: bool = False
    removed: bool = False


def leaderboard(
    db: Database,
    *,
    tournament_id: int | None = None,
    system: str = "pl",
    min_games: int = MIN_GAMES,
    include_removed: bool | None = None,
) -> list[LeaderRow]:
    """The leaderboard over all finished matches (or one tournament's): the ranked bots best
    first (rank 1, 2, ...), then the provisional ones (rank None), best first too.

    ``include_removed`` (default: only for a tournament's standings) keeps removed bots.
    """
    get_system(system)  # an unknown system is an error even when there are no results
    keep_removed = tournament_id is not None if include_removed is None else include_removed
    with gc_paused():  # until the matches and results read are freed again (see gc_paused)
        return _refit(db, tournament_id, system, min_games, keep_removed)


def _refit(
    db: Database, tournament_id: int | None, system: str, min_games: int, keep_removed: bool
) -> list[LeaderRow]:
    matches = finished_matches(db, tournament_id)  # read once for the ratings and the statistics
    results = game_results(db, tournament_id, matches=matches)
    if not results:
        return []
    stats = bot_stats(db, tournament_id, matches=matches)
    return rank_rows(rate(results, system), stats, system, min_games, keep_removed)


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (and back on after it if it was on).

    A refit over 10,000 matches makes some 100,000 small objects (rows, results, tuples) that
    form no reference cycles; while they pile up, the collector runs a few hundred times, twice
    over the whole heap: a quarter to a third of the refit's time, to free nothing.  Reference
    counting still frees everything as usual.  Safe across threads and nesting (the web refits
    in a pool): the collector is turned back on when the last block that turned it off ends, and
    only if it was on when the first began.
    """
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def rank_rows(
    ratings: Sequence[Rating],
    stats: dict[str, BotStats],
    system: str,
    min_games: int = MIN_GAMES,
    include_removed: bool = False,
) -> list[LeaderRow]:
    """Leaderboard rows from ratings and per-bot statistics (pure; see the module docstring)."""
    if min_games < 0:
        raise ValueError(f"the minimum of games must be 0 or more, got {min_games}")
    decimals = get_system(system).decimals
    rows = []
    for r in sorted(ratings, key=lambda r: (-r.conservative, -r.rating, r.bot)):
        st = stats.get(r.bot) or BotStats(r.bot)
        if st.removed and not include_removed:
            continue
        lo, hi = (None, None) if st.one_sided else _interval(r, decimals)
        rows.append(
            LeaderRow(
                rank=None,
                bot=r.bot,
                rating=r.rating,
                lo=lo,
                hi=hi,
                conservative=r.conservative,
                games=st.games,
                wins=st.wins,
                mean_score=st.mean_score,
                timeouts=st.timeouts,
                forfeits=st.forfeits,
                provisional=st.games < min_games,
                removed=st.removed,
            )
        )
    ranked = [row for row in rows if not row.provisional]
    out = [_with_rank(row, k) for k, row in enumerate(ranked, start=1)]
    return out + [row for row in rows if row.provisional]


def _with_rank(row: LeaderRow, rank: int) -> LeaderRow:
    return LeaderRow(**{**asdict(row), "rank": rank})


def _interval(r: Rating, decimals: int) -> tuple[float | None, float | None]:
    """The interval, or (None, None) when it is missing or narrower than the last shown digit
    (:func:`arena.ratings.rating.shown_interval`)."""
    return shown_interval(r.lo, r.hi, decimals)


def ranked(rows: Sequence[LeaderRow]) -> list[LeaderRow]:
    """The ranked rows (not provisional)."""
    return [r for r in rows if not r.provisional]


def provisional(rows: Sequence[LeaderRow]) -> list[LeaderRow]:
    """The provisional rows (too few games to be ranked)."""
    return [r for r in rows if r.provisional]


def _num(value: float, system: str) -> str:
    return f"{value:.{get_system(system).decimals}f}"


def interval_text(row: LeaderRow, system: str) -> str:
    """``1680 .. 1843``; for an interval without width "too few games" (a provisional bot) or
    "not measurable" (a ranked one: see the module docstring)."""
    if row.lo is None or row.hi is None:
        return TOO_FEW if row.provisional else NOT_MEASURABLE
    return f"{_num(row.lo, system)} .. {_num(row.hi, system)}"


def bot_label(row: LeaderRow) -> str:
    """The bot's name, marked when the bot has been removed."""
    return f"{row.bot} (removed)" if row.removed else row.bot


def _cells(row: LeaderRow, system: str) -> list[str]:
    return [
        bot_label(row),
        _num(row.rating, system),
        interval_text(row, system),
        _num(row.conservative, system),
        str(row.games),
        wins_text(row.wins),
        f"{row.mean_score:.1f}",
        str(row.timeouts),
        str(row.forfeits),
    ]


def headers(system: str) -> list[str]:
    """Column headers of a ranked table (a provisional table has no ``#``)."""
    spec = get_system(system)
    return [
        "#", "bot", spec.rating_label, "95% interval", spec.ranked_by_label,
        "games", "wins", "mean score", "timeouts", "forfeits",
    ]  # fmt: skip


def provisional_title(min_games: int = MIN_GAMES) -> str:
    """The heading of the provisional list."""
    return f"Provisional: fewer than {min_games} games, not ranked"


def store_ratings(
    db: Database, rows: list[LeaderRow], system: str, scope: str, *, tournament_id: int | None
) -> None:
    """Append the ratings to the rating history (an interval without width is stored as
    ``lo == hi == rating``).

    ``rows`` are :func:`leaderboard`'s for ``tournament_id`` (None: all finished matches): each
    row's name is mapped back to the bot version it stands for by naming the versions of those
    matches exactly as the leaderboard did (``name``, or ``name@N`` when several versions of the
    bot played), so a bot whose latest version played is not filed under an older one."""
    matches = finished_matches(db, tournament_id)
    played = sorted({s.bot_version_id for m in matches for s in m.seats})
    ids = {name: vid for vid, name in version_names(db, played).items()}
    with db.session() as session:
        for r in rows:
            if r.bot in ids:
                session.add(
                    RatingRow(
                        system=system,
                        scope=scope,
                        bot_version_id=ids[r.bot],
                        rating=r.rating,
                        lo=r.rating if r.lo is None else r.lo,
                        hi=r.rating if r.hi is None else r.hi,
                        games=r.games,
                    )
                )


def render(
    rows: list[LeaderRow], system: str, title: str = "Leaderboard", min_games: int = MIN_GAMES
) -> RenderableType:
    """The leaderboard for the terminal: the ranked table (or, when nobody is ranked, a line
    saying so), then the provisional list (if any)."""
    cols = headers(system)
    table = Table()
    for name in cols:
        table.add_column(name, justify="left" if name == "bot" else "right")
    top = ranked(rows)
    for r in top:
        table.add_row(str(r.rank), *_cells(r, system))
    # the title lines above the table, not in it: they wrap at the console's width, not the table's
    about = Text(get_system(system).title, style="dim")
    parts: list[RenderableType] = [Text(title, style="bold"), about]
    if top:
        parts.append(table)
    else:  # no empty table: the provisional list (if any) follows
        parts.append(Text(f"No bot has {min_games} games yet: nobody is ranked.", style="dim"))
    waiting = provisional(rows)
    if waiting:
        extra = Table(title=provisional_title(min_games))
        for name in cols[1:]:
            extra.add_column(name, justify="left" if name == "bot" else "right")
        for r in waiting:
            extra.add_row(*_cells(r, system))
        parts.append(extra)
    return Group(*parts)


def to_markdown(
    rows: list[LeaderRow],
    system: str,
    title: str,
    notes: list[str] | None = None,
    min_games: int = MIN_GAMES,
) -> str:
    """The leaderboard as a Markdown document: the ranked table (or, when nobody is ranked, a line
    saying so), then the provisional list."""
    out = [f"# {title}", "", f"Rating: {get_system(system).title}.", ""]
    out += [f"- {n}" for n in notes or []]
    if notes:
        out.append("")
    cols = headers(system)
    top = ranked(rows)
    if top:
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" if c == "bot" else "---:" for c in cols) + "|")
    for r in top:
        out.append("| " + " | ".join([str(r.rank), *_cells(r, system)]) + " |")
    if not top:
        out.append(f"No bot has {min_games} games yet: nobody is ranked.")
    waiting = provisional(rows)
    if waiting:
        out += ["", f"## {provisional_title(min_games)}", ""]
        out.append("| " + " | ".join(cols[1:]) + " |")
        out.append("|" + "|".join("---" if c == "bot" else "---:" for c in cols[1:]) + "|")
        for r in waiting:
            out.append("| " + " | ".join(_cells(r, system)) + " |")
    return "\n".join(out) + "\n"


def to_json(
    rows: list[LeaderRow], system: str, meta: dict[str, Any], min_games: int = MIN_GAMES
) -> dict[str, Any]:
    """The leaderboard as JSON-ready data: every row (ranked first, then provisional, each with
    its ``provisional`` flag), the system, how it ranks and the minimum of games."""
    return {
        **meta,
        "system": system,
        "ranking": get_system(system).title,
        "min_games": min_games,
        "rows": [asdict(r) for r in rows],
    }
