"""Hostile bots in a real tournament: worker processes, persistent sandboxed bots, the database.

A gauntlet of the greedy bot against the single-file hostile bots (spinner, fork bomb, memory
hog, escaper), sandboxed with small limits, two workers.  Every match must be stored finished
exactly once with its seats and a replay that verifies through the engine; each offender is
stored with its termination, last place and its score; the CPU time of every seat is stored and
plausible; afterwards no bot process is left (not even the escaper's grandchild).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path

import pytest
from sqlmodel import col, select

from arena.engine import replay
from arena.leaderboard import leaderboard
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat, Replay
from arena.store.tournaments import load_replay
from arena.tournament.runner import Progress, run_tournament
from arena.tournament.service import create

from .conftest import LIMITS
from .helpers import (
    BOTS,
    FAULTY,
    cgroup_dirs_made_by,
    cgroups_available,
    children,
    cmdline,
    kill_all,
    wait_gone,
)

MOVE, BANK = 0.5, 1.5  # a timeout costs 2 s
HOSTILE = {
    # bot: the terminations it may be stored with (see test_hostile_bots for why)
    "spinner": {"timeout"},
    "forkbomb": {"timeout", "crashed"},
    "memhog": {"crashed", "timeout"},  # the OOM kill, unless reclaim outlasts the 2 s budget
    "escaper": None,  # plays on
}

pytestmark = pytest.mark.skipif(cgroups_available() is not None, reason=str(cgroups_available()))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private ARENA_HOME with a SQLite database; afterwards no process of its bots is left."""
    home = (tmp_path / "home").resolve()
    home.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    tracker = resource_tracker._resource_tracker
    running_before = getattr(tracker, "_pid", None) is not None
    yield home
    # the worker pool's resource tracker would outlive the test as a child of this process (and
    # later tests count this process's children); it restarts by itself when a pool needs it.
    # One that ran before this test is left alone: an earlier test's processes (the session's
    # Dask cluster of tests/cluster) hold it, and stopping it waited for them, for ever.
    stop = getattr(tracker, "_stop", None)
    if stop is not None and not running_before:
        stop()
    left = wait_gone([str(home / "artifacts")], timeout=5.0)
    kill_all(left)
    assert not left, f"bot processes survived the tournament: {left}"


def test_hostile_gauntlet_is_stored_correctly(home: Path) -> None:
    db = Database()
    try:
        add_bot(db, "greedy", BOTS / "greedy_bot.py")
        for name in HOSTILE:
            add_bot(db, name, FAULTY / f"{name}_bot.py")
        t = create(
            db,
            list(HOSTILE),
            fmt="gauntlet",
            candidate="greedy",
            table_sizes=(2,),
            games=1,
            seed=3,
            move_time=MOVE,
            bank=BANK,
            sandbox=LIMITS,
        )
        assert t.id is not None
        workers: set[int] = set()

        def progress(_: Progress) -> None:  # runs in this (the coordinating) process
            workers.update(p for p in children(os.getpid()) if "spawn_main" in cmdline(p))

        run_tournament(db, t.id, jobs=2, progress=progress)
        # the workers stopped their bots when they exited, and removed every bot cgroup
        assert workers and not cgroup_dirs_made_by(workers), cgroup_dirs_made_by(workers)

        with db.session() as session:
            names = {
                v.id: b.name
                for v, b in session.exec(select(BotVersion, Bot).where(col(BotVersion.bot_id) == col(Bot.id)))
            }
            matches = session.exec(
                select(Match).where(Match.tournament_id == t.id).order_by(col(Match.ordinal))
            ).all()
            seats = {
                m.id: session.exec(
                    select(MatchSeat).where(MatchSeat.match_id == m.id).order_by(col(MatchSeat.seat))
                ).all()
                for m in matches
            }
            replays = {r.match_id: r for r in session.exec(select(Replay)).all()}
        assert len(matches) == len(HOSTILE) * 2  # each table under both seat rotations
        seen = {name: 0 for name in HOSTILE}
        for m in matches:
            assert m.id is not None
            assert m.status == "finished" and m.attempts == 1, m
            assert m.id in replays
            rep = replay(load_replay(db, m.id))  # verifies through the engine, and the stored sha256
            assert rep.header["match"] == f"t{t.id}-m{m.id}"
            rows = seats[m.id]
            bots = [names[s.bot_version_id] for s in rows]
            assert tuple(rep.header["seating"]) == tuple(bots)
            assert [s.score for s in rows] == rep.result["scores"]
            assert [s.placing for s in rows] == rep.result["placings"]
            assert m.termination == rep.result["termination"]
            (hostile_seat,) = [i for i, b in enumerate(bots) if b != "greedy"]
            bad, good = rows[hostile_seat], rows[1 - hostile_seat]
            name = bots[hostile_seat]
            seen[name] += 1
            expected = HOSTILE[name]
            forfeits = rep.result.get("forfeits", [])
            if expected is None:
                assert forfeits == [], forfeits
                assert bad.termination == good.termination == m.termination
                assert m.termination in ("normal", "round-cap")
            else:
                assert bad.termination in expected, (name, bad.termination, bad.detail)
                assert [f["seat"] for f in forfeits] == [hostile_seat]
                assert forfeits[0]["reason"] == bad.termination
                assert bad.detail and forfeits[0]["detail"] == bad.detail
                assert bad.placing == 2 and good.placing == 1  # the offender is last
                assert good.termination == "forfeit" and not good.detail
            for s in rows:  # the CPU time of every seat is stored and plausible
                assert s.cpu_time is not None, (name, s)
                assert 0.0 <= s.cpu_time <= (m.duration or 0.0) * 2 + 0.5, (name, s, m.duration)
            if name == "spinner":
                assert bad.cpu_time is not None and bad.cpu_time >= 0.1 * (MOVE + BANK), bad  # loose: busy CI
                assert good.cpu_time is not None and bad.cpu_time > 5 * good.cpu_time
        assert seen == {name: 2 for name in HOSTILE}
        for m in matches:  # shown with -s
            print(
                f"\n[t{t.id}-m{m.id}] "
                + ", ".join(
                    f"{names[s.bot_version_id]}: {s.termination} place {s.placing} score {s.score} "
                    f"cpu {s.cpu_time:.3f}s"
                    for s in seats[m.id]
                )
            )

        board = {row.bot: row for row in leaderboard(db, tournament_id=t.id, system="elo")}
        assert board["greedy"].forfeits == 0
        assert board["spinner"].timeouts == 2
        assert board["escaper"].forfeits == 0
    finally:
        db.close()
