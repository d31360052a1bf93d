"""Helpers for the cluster tests: the standard tournament, its rows, bot processes left over."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from sqlmodel import col, select

from arena.sandbox import SandboxLimits
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat, Replay
from arena.tournament.service import create

REPO = Path(__file__).resolve().parents[2]
BOTS = ("greedy", "invader", "random")  # greedy and invader are deterministic; random seeds from the match id
SEED = 8
TOTAL = 12  # three 2-player tables x 2 seeds x 2 seat rotations


def setup_tournament(db: Database, *, sandbox: bool, games: int = 2, seed: int = SEED) -> int:
    """Register the sample bots (if needed) and create the standard round robin; its id."""
    with db.session() as session:
        known = set(session.exec(select(Bot.name)).all())
    for name in BOTS:
        if name not in known:
            add_bot(db, name, REPO / "bots" / f"{name}_bot.py")
    t = create(
        db,
        list(BOTS),
        table_sizes=(2,),
        games=games,
        seed=seed,
        move_time=2.0,
        bank=10.0,
        sandbox=SandboxLimits() if sandbox else None,
    )
    assert t.id is not None
    return t.id


def match_rows(db: Database, tournament_id: int) -> list[dict[str, Any]]:
    """Every match of a tournament by ordinal: status, seats, scores, placings, replays."""
    with db.session() as session:
        pairs = session.exec(select(BotVersion, Bot).where(col(BotVersion.bot_id) == col(Bot.id))).all()
        names = {v.id: b.name for v, b in pairs}
        out = []
        for m in session.exec(
            select(Match).where(Match.tournament_id == tournament_id).order_by(col(Match.ordinal))
        ).all():
            seats = session.exec(
                select(MatchSeat).where(MatchSeat.match_id == m.id).order_by(col(MatchSeat.seat))
            ).all()
            replays = session.exec(select(Replay).where(Replay.match_id == m.id)).all()
            out.append(
                {
                    "id": m.id,
                    "ordinal": m.ordinal,
                    "status": m.status,
                    "termination": m.termination,
                    "seed": m.seed,
                    "attempts": m.attempts,
                    "bots": tuple(names[s.bot_version_id] for s in seats),
                    "scores": tuple(s.score for s in seats),
                    "placings": tuple(s.placing for s in seats),
                    "replays": len(replays),
                }
            )
        return out


def outcome(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What two runs of one schedule must agree on, by ordinal."""
    return [(r["ordinal"], r["seed"], r["bots"], r["scores"], r["placings"], r["termination"]) for r in rows]


def processes_with(marker: str) -> dict[int, str]:
    """Live processes whose command line contains ``marker`` (not this one)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmdline:
            out[int(entry.name)] = cmdline
    return out


def wait_gone(marker: str, timeout: float) -> dict[int, str]:
    """Wait until no process mentions ``marker``; return the ones left after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left = processes_with(marker)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)
