"""Running tournaments: every match finished with one verifiable replay, leaderboards, determinism."""

from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import select

from arena.engine import placings, replay, scores
from arena.leaderboard import leaderboard
from arena.ratings import system_names
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Match, MatchSeat, Replay, Tournament
from arena.store.tournaments import CorruptReplayError, UnknownMatchError, load_replay
from arena.tournament.runner import run_tournament
from arena.tournament.service import MAX_GAMES, TournamentConfigError, create

from .helpers import SAMPLES, cli_inproc, match_rows, outcome, sample

DETERMINISTIC = {"greedy", "invader"}


def _register(db: Database, names: tuple[str, ...] = SAMPLES) -> None:
    for name in names:
        add_bot(db, name, sample(name))


def _check_finished(db: Database, tournament_id: int) -> list[dict[str, object]]:
    """Every match finished with scored seats and one replay that re-plays to the stored result."""
    rows = match_rows(db, tournament_id)
    assert rows
    for r in rows:
        assert r["status"] == "finished", r
        assert r["replays"] == 1, r
        assert r["termination"] in ("normal", "round-cap"), r
        assert all(t in ("normal", "round-cap") for t in r["seat_terminations"]), r  # nobody forfeited
        assert r["attempts"] >= 1
        text = load_replay(db, r["id"])
        rep = replay(text)  # raises ReplayError unless every event re-applies through the engine
        assert rep.header["seed"] == r["seed"]
        assert rep.header["players"] == len(r["seats"])
        assert tuple(rep.header["seating"]) == r["bots"]
        assert rep.header["match"] == f"t{tournament_id}-m{r['id']}"
        assert tuple(scores(rep.final)) == r["scores"] == tuple(rep.result["scores"])
        assert tuple(rep.result["placings"]) == r["placings"] == placings(r["scores"])
    with db.session() as session:
        t = session.get(Tournament, tournament_id)
        assert t is not None and t.status == "finished" and t.finished_at is not None
    return rows


def test_round_robin_run(db: Database) -> None:
    _register(db)
    t = create(db, list(SAMPLES), table_sizes=(2, 3), games=1, seed=11, move_time=2.0, bank=20.0)
    assert t.id is not None
    run_tournament(db, t.id, jobs=2)
    rows = _check_finished(db, t.id)
    assert len(rows) == 3 * 2 + 1 * 3  # three 2-player tables, one 3-player table, every rotation
    assert Counter(len(r["seats"]) for r in rows) == {2: 6, 3: 3}

    games = Counter(b for r in rows for b in r["bots"])
    wins: Counter[str] = Counter()  # a first place shared by k seats is 1/k of a win (arena.endings)
    for r in rows:
        firsts = r["placings"].count(1)
        for b, p in zip(r["bots"], r["placings"], strict=True):
            wins[b] += 1 / firsts if p == 1 else 0
    points = Counter()
    for r in rows:
        for b, s in zip(r["bots"], r["scores"], strict=True):
            points[b] += s
    assert games == {name: 7 for name in SAMPLES}
    for system in system_names():
        board = leaderboard(db, tournament_id=t.id, system=system, min_games=7)
        assert [x.rank for x in board] == [1, 2, 3]
        assert [x.provisional for x in leaderboard(db, tournament_id=t.id, system=system)] == [True] * 3
        assert {x.bot for x in board} == set(SAMPLES), system
        for x in board:
            assert x.lo is None or x.hi is None or x.lo <= x.rating <= x.hi, (system, x)
            assert x.games == games[x.bot] and x.wins == pytest.approx(wins[x.bot]), (system, x)
            assert x.mean_score == pytest.approx(points[x.bot] / games[x.bot])
            assert x.timeouts == 0 and x.forfeits == 0
        assert [x.conservative for x in board] == sorted((x.conservative for x in board), reverse=True)
    # the all-matches board rates the same games (in finishing order, the tournament's board in
    # schedule order): the same board, its bootstrap bounds included (the fit draws its
    # replicates over the games in a canonical order)
    assert leaderboard(db, system="pl") == leaderboard(db, tournament_id=t.id, system="pl")

    # the same tournament again (same seed): the same schedule, and the same results, the random
    # bot's too (it seeds itself from the Welcome's bot seed: match seed and seat, not match id)
    t2 = create(db, list(SAMPLES), table_sizes=(2, 3), games=1, seed=11, move_time=2.0, bank=20.0)
    assert t2.id is not None
    run_tournament(db, t2.id, jobs=2)
    rows2 = _check_finished(db, t2.id)
    assert [(r["seed"], r["group"], r["bots"]) for r in rows2] == [
        (r["seed"], r["group"], r["bots"]) for r in rows
    ]
    same = [i for i, r in enumerate(rows) if set(r["bots"]) <= DETERMINISTIC]
    assert len(same) == 2
    assert [outcome(rows)[i] for i in same] == [outcome(rows2)[i] for i in same]
    assert outcome(rows) == outcome(rows2)
    # across both tournaments the overall leaderboard counts every game
    assert {x.bot: x.games for x in leaderboard(db, system="elo")} == {n: 14 for n in SAMPLES}


def test_create_rejects_bad_setups(db: Database) -> None:
    _register(db, ("greedy", "invader"))
    with pytest.raises(TournamentConfigError, match="unknown format"):
        create(db, ["greedy", "invader"], fmt="league")
    with pytest.raises(TournamentConfigError, match="table sizes"):
        create(db, ["greedy", "invader"], table_sizes=(5,))
    with pytest.raises(TournamentConfigError, match="at least 3 bots"):
        create(db, ["greedy", "invader"], table_sizes=(3,))
    with pytest.raises(TournamentConfigError, match="only once"):
        create(db, ["greedy", "greedy"])
    with pytest.raises(TournamentConfigError, match="needs --candidate"):
        create(db, ["greedy"], fmt="gauntlet")
    with pytest.raises(TournamentConfigError, match="must not also be in the field"):
        create(db, ["greedy", "invader"], fmt="gauntlet", candidate="greedy")
    with db.session() as session:
        assert session.exec(select(Tournament)).all() == []


def test_a_name_or_games_the_columns_cannot_hold_is_refused_on_every_backend(
    db: Database, db_url: str, arena_home: Path
) -> None:
    """A tournament name over 128 characters and a ``--games`` count over :data:`MAX_GAMES` are
    refused before anything is stored, on SQLite as on PostgreSQL, whose VARCHAR(128) name and
    INTEGER games column answered ``tournament create --name <200 x>`` and ``--games
    3000000000`` with a DataError traceback (SQLite stored the long name, and was still
    building the schedule of 6 billion matches 30 s later)."""
    _register(db, ("greedy", "invader"))
    with pytest.raises(TournamentConfigError, match="at most 128"):
        create(db, ["greedy", "invader"], name="x" * 129)
    with pytest.raises(TournamentConfigError, match="not UTF-8"):
        create(db, ["greedy", "invader"], name="a\udcedb")
    with pytest.raises(TournamentConfigError, match="NUL"):
        create(db, ["greedy", "invader"], name="a\x00b")
    with pytest.raises(TournamentConfigError, match="too many"):
        create(db, ["greedy", "invader"], games=MAX_GAMES + 1)
    for args in (["--name", "x" * 200], ["--games", "3000000000"]):
        run = cli_inproc(arena_home, db_url, "tournament", "create", "greedy", "invader", *args, code=2)
        assert "at most" in run.stderr or "less than or equal" in run.stderr, run.stderr
    with db.session() as session:
        assert session.exec(select(Tournament)).all() == []
    t = create(db, ["greedy", "invader"], name="é" * 128, games=1)  # the longest name is stored
    assert t.name == "é" * 128


def _snapshot(db: Database) -> tuple[list[object], ...]:
    with db.session() as session:
        matches = [m.model_dump() for m in session.exec(select(Match).order_by(Match.id)).all()]
        seats = [s.model_dump() for s in session.exec(select(MatchSeat)).all()]
        replays = [
            (r.match_id, r.sha256, r.size, r.data)
            for r in session.exec(select(Replay).order_by(Replay.match_id))
        ]
        return matches, sorted(seats, key=lambda s: (s["match_id"], s["seat"])), replays


def _overwrite(db: Database, match_id: int, data: bytes) -> None:
    with db.session() as session:
        r = session.get(Replay, match_id)
        assert r is not None
        r.data = data
        session.add(r)


def test_corrupt_replay_is_detected(db: Database) -> None:
    _register(db, ("greedy", "invader"))
    t = create(db, ["greedy", "invader"], games=1, seed=4, move_time=2.0, bank=20.0)
    assert t.id is not None
    run_tournament(db, t.id, jobs=1)
    a, b = (r["id"] for r in _check_finished(db, t.id))
    good = load_replay(db, a)
    with db.session() as session:
        original = session.get(Replay, a)
        assert original is not None
        blob = original.data

    for damage, message in [
        (b"\x00garbage, not zlib at all" * 3, "is corrupt"),
        (zlib.compress(good.replace('"seed"', '"sEEd"').encode()), "does not match its stored sha256"),
        (zlib.compress(b"\xff\xfe not utf-8"), "is corrupt"),
        (blob[: len(blob) // 2], "is corrupt"),  # truncated
    ]:
        _overwrite(db, a, damage)
        before = _snapshot(db)
        with pytest.raises(CorruptReplayError, match=f"match {a}") as info:
            load_replay(db, a)
        assert message in str(info.value)
        assert load_replay(db, b)  # the other replay is fine
        assert _snapshot(db) == before  # reading changed nothing

    _overwrite(db, a, blob)
    assert load_replay(db, a) == good
    with pytest.raises(UnknownMatchError, match="no replay"):
        load_replay(db, 10_000)


def test_stop_after(sqlite_db: Database) -> None:
    """``stop_after`` plays that many matches and leaves the rest queued; a second run finishes."""
    db = sqlite_db
    _register(db, ("greedy", "invader"))
    t = create(db, ["greedy", "invader"], games=2, seed=9, move_time=2.0, bank=20.0)
    assert t.id is not None
    run_tournament(db, t.id, jobs=1, stop_after=1)
    rows = match_rows(db, t.id)
    assert Counter(r["status"] for r in rows) == {"finished": 1, "queued": 3}
    assert rows[0]["status"] == "finished"  # in schedule order
    with db.session() as session:
        tt = session.get(Tournament, t.id)
        assert tt is not None and tt.status == "running"
    run_tournament(db, t.id, jobs=2)
    rows = _check_finished(db, t.id)
    assert [r["attempts"] for r in rows] == [1, 1, 1, 1]
