"""Leaderboards: ratings (recomputed from stored results) joined with per-bot statistics."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rich.table import Table
from sqlmodel import select

from arena.ratings import rate
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, RatingRow
from arena.store.results import bot_stats, game_results

SYSTEMS = ("pl", "elo", "openskill")
SYSTEM_TITLES = {
    "pl": "Plackett-Luce fit (Elo scale), 95% bootstrap interval",
    "elo": "Elo (pairwise, K=16), 95% bootstrap interval",
    "openskill": "OpenSkill Plackett-Luce (Elo scale), mu ± 1.96 sigma",
}


@dataclass(frozen=True)
class LeaderRow:
    """One line of a leaderboard."""

    rank: int
    bot: str
    rating: float
    lo: float
    hi: float
    games: int
    wins: int
    mean_score: float
    timeouts: int
    forfeits: int


def leaderboard(db: Database, *, tournament_id: int | None = None, system: str = "pl") -> list[LeaderRow]:
    """The leaderboard over all finished matches (or one tournament's), best first."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown rating system {system!r}; choose from {', '.join(SYSTEMS)}")
    results = game_results(db, tournament_id)
    if not results:
        return []
    stats = bot_stats(db, tournament_id)
    rows = []
    for rank, r in enumerate(rate(results, system), start=1):
        st = stats[r.bot]
        rows.append(
            LeaderRow(
                rank, r.bot, r.rating, r.lo, r.hi, st.games, st.wins, st.mean_score, st.timeouts, st.forfeits
            )
        )
    return rows


def store_ratings(db: Database, rows: list[LeaderRow], system: str, scope: str) -> None:
    """Append the ratings to the rating history."""
    with db.session() as session:
        ids: dict[str, int] = {}
        for v, b in session.exec(select(BotVersion, Bot).where(BotVersion.bot_id == Bot.id)).all():
            assert v.id is not None
            ids.setdefault(b.name, v.id)
            ids[f"{b.name}@{v.version}"] = v.id
        for r in rows:
            if r.bot in ids:
                session.add(
                    RatingRow(
                        system=system,
                        scope=scope,
                        bot_version_id=ids[r.bot],
                        rating=r.rating,
                        lo=r.lo,
                        hi=r.hi,
                        games=r.games,
                    )
                )


def render(rows: list[LeaderRow], system: str, title: str = "Leaderboard") -> Table:
    """A rich table of the leaderboard."""
    table = Table(title=f"{title}\n[dim]{SYSTEM_TITLES[system]}[/dim]")
    for name in ("#", "bot", "rating", "95% interval", "games", "wins", "mean score", "timeouts", "forfeits"):
        table.add_column(name, justify="left" if name == "bot" else "right")
    for r in rows:
        table.add_row(
            str(r.rank),
            r.bot,
            f"{r.rating:.0f}",
            f"{r.lo:.0f} .. {r.hi:.0f}",
            str(r.games),
            str(r.wins),
            f"{r.mean_score:.1f}",
            str(r.timeouts),
            str(r.forfeits),
        )
    return table


def to_markdown(rows: list[LeaderRow], system: str, title: str, notes: list[str] | None = None) -> str:
    """The leaderboard as a Markdown document."""
    out = [f"# {title}", "", f"Rating: {SYSTEM_TITLES[system]}.", ""]
    out += [f"- {n}" for n in notes or []]
    if notes:
        out.append("")
    out.append("| # | bot | rating | 95% interval | games | wins | mean score | timeouts | forfeits |")
    out.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        out.append(
            f"| {r.rank} | {r.bot} | {r.rating:.0f} | {r.lo:.0f} .. {r.hi:.0f} | {r.games} | {r.wins} | "
            f"{r.mean_score:.1f} | {r.timeouts} | {r.forfeits} |"
        )
    return "\n".join(out) + "\n"


def to_json(rows: list[LeaderRow], system: str, meta: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard as JSON-ready data."""
    return {**meta, "system": system, "rows": [asdict(r) for r in rows]}
