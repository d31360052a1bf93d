"""Stored matches for the analysis tests: games played by the engine, recorded in a real SQLite
database as finished stand-alone matches (exactly as 'arena match' records them)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena.engine import GreedyPolicy, Policy, play_game, replay
from arena.engine.variants import DEFAULT, Rules
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.adhoc import start_adhoc_match
from arena.store.bots import add_bot, same_as_current
from arena.store.db import Database
from arena.store.tournaments import record_result

REPO = Path(__file__).resolve().parents[2]


def record_game(seed: int, policies: Sequence[Policy], rules: Rules = DEFAULT) -> str:
    """The game record of one engine game."""
    return play_game(seed, policies, rules=rules).record


def store_match(db: Database, record: str, names: Sequence[str]) -> int:
    """Store ``record`` as a finished match with bots ``names`` by seat; its match id."""
    rep = replay(record)
    seed = int(rep.header["seed"])
    versions: dict[str, int] = {}
    for name in names:
        if name not in versions:
            path = REPO / "bots" / "greedy_bot.py"
            v = same_as_current(db, name, path) or add_bot(db, name, path)
            assert v.id is not None
            versions[name] = v.id
    match_id = start_adhoc_match(db, seed, [versions[n] for n in names])
    res = rep.result
    seats = tuple(
        SeatOutcome(k, names[k], res["scores"][k], res["placings"][k], res["termination"], "", 0.0, 0.0, 0)
        for k in range(len(names))
    )
    result = MatchResult(
        match_id=str(match_id),
        seed=seed,
        players=len(names),
        termination=res["termination"],
        seats=seats,
        replay=record,
    )
    record_result(db, match_id, result)
    return match_id


def greedy_match(db: Database, seed: int, players: int, rules: Rules = DEFAULT) -> int:
    """A stored match of the engine's greedy in every seat."""
    names = [f"bot{k}" for k in range(players)]
    return store_match(db, record_game(seed, [GreedyPolicy() for _ in range(players)], rules), names)
