"""A tournament's time control is stored one way (columns ``move_time``, ``bank``, ``cpu_clock``)
and rebuilt in one place (:func:`arena.store.tournaments.time_control_of`): revision 0005 moves the
clock out of the JSON config (and back on downgrade), and a CPU-clock tournament's matches are
played on the CPU clock, also after a downgrade, an upgrade and a resume.  Real databases
(SQLite and PostgreSQL), real bot processes."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from arena.endings import MatchEnd, Reason
from arena.referee.timecontrol import TimeControl
from arena.store.bots import add_bot
from arena.store.db import Database, _alembic_config
from arena.store.tournaments import get_tournament, load_replay, queued_tasks, time_control_of
from arena.tournament.runner import run_tournament
from arena.tournament.service import create
from arena.web.queries import get_tournament as web_tournament

from .helpers import cli_inproc, match_rows, run_cli, sample

SLEEPY = Path(__file__).resolve().parent / "sleepy_bot.py"  # waits 1 s of wall clock, no CPU
MOVE, BANK = 0.2, 0.3  # a 0.5 s budget: the sleepy bot is over it on the wall clock only
CPU_LABEL, WALL_LABEL = "0.2s CPU + 0.3s CPU bank", "0.2s + 0.3s bank"

# a tournament row as revision 0004 stored it: the clock half in columns, half in the config
INSERT_0004 = text(
    "INSERT INTO tournament (id, name, format, table_sizes, games, seed, move_time, bank, status, "
    "config, created_at) VALUES (:id, :name, 'round-robin', '2', 1, 3, 0.5, 4.0, 'created', :config, "
    "'2026-11-30 10:00:00')"
)


def _migrate(url: str, revision: str, *, down: bool = False) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        (command.downgrade if down else command.upgrade)(_alembic_config(conn), revision)
    engine.dispose()


def _tournament_columns(url: str) -> tuple[set[str], dict[int, dict[str, object]]]:
    """The tournament table's column names and every row's config, by id."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            names = {c["name"] for c in inspect(conn).get_columns("tournament")}
            rows = conn.execute(text("SELECT id, config FROM tournament")).all()
            configs = {int(tid): json.loads(raw) for tid, raw in rows}
    finally:
        engine.dispose()
    return names, configs


def test_revision_0005_moves_the_cpu_clock_from_the_config_to_a_column(new_db_url: Callable[[], str]) -> None:
    url = new_db_url()
    _migrate(url, "0004")
    configs = {
        1: {"bots": ["a", "b"], "cpu_clock": True, "sandbox": None},
        2: {"bots": ["a", "b"], "cpu_clock": False},
        3: {"bots": ["a", "b"]},  # made before the clock could be chosen
    }
    engine = create_engine(url)
    with engine.begin() as conn:
        for tid, config in configs.items():
            conn.execute(INSERT_0004, {"id": tid, "name": f"old {tid}", "config": json.dumps(config)})
    engine.dispose()

    db = Database(url)  # opening upgrades to the newest revision
    try:
        controls = {tid: time_control_of(get_tournament(db, tid)) for tid in configs}
        assert controls == {
            1: TimeControl(0.5, 4.0, cpu=True),
            2: TimeControl(0.5, 4.0),
            3: TimeControl(0.5, 4.0),
        }
        for tid in configs:
            config = json.loads(get_tournament(db, tid).config)
            assert "cpu_clock" not in config and config["bots"] == ["a", "b"], config
    finally:
        db.close()

    _migrate(url, "0004", down=True)
    names, stored = _tournament_columns(url)
    assert "cpu_clock" not in names
    assert {tid: c["cpu_clock"] for tid, c in stored.items()} == {1: True, 2: False, 3: False}
    assert stored[1]["bots"] == ["a", "b"]


def test_a_cpu_clock_tournament_plays_on_the_cpu_clock_across_migrations_and_a_resume(
    new_db_url: Callable[[], str], arena_home: Path
) -> None:
    """The sleepy bot waits 1 s on its first decision of each match: over the 0.5 s budget on the
    wall clock (a timeout forfeit), inside it on the CPU clock.  The CPU-clock tournament is
    stopped after one match, the database taken back to revision 0004 (the clock goes into the
    config) and opened again (upgraded), and the resumed run still plays on the CPU clock."""
    url = new_db_url()
    db = Database(url)
    add_bot(db, "sleepy", SLEEPY)
    add_bot(db, "greedy", sample("greedy"))
    cpu = create(db, ["sleepy", "greedy"], games=1, seed=7, move_time=MOVE, bank=BANK, cpu_clock=True)
    wall = create(db, ["sleepy", "greedy"], games=1, seed=7, move_time=MOVE, bank=BANK)
    assert cpu.id is not None and wall.id is not None
    assert {t.control for t in queued_tasks(db, cpu.id)} == {TimeControl(MOVE, BANK, cpu=True)}
    run_tournament(db, cpu.id, jobs=1, stop_after=1)
    assert [r["status"] for r in match_rows(db, cpu.id)].count("finished") == 1
    db.close()

    _migrate(url, "0004", down=True)
    _, configs = _tournament_columns(url)
    assert (configs[cpu.id]["cpu_clock"], configs[wall.id]["cpu_clock"]) == (True, False)

    db = Database(url)
    try:
        assert time_control_of(get_tournament(db, cpu.id)) == TimeControl(MOVE, BANK, cpu=True)
        assert {t.control for t in queued_tasks(db, cpu.id)} == {TimeControl(MOVE, BANK, cpu=True)}
        run_tournament(db, cpu.id, jobs=1)  # the resume
        run_tournament(db, wall.id, jobs=1)
        for tid, label in ((cpu.id, CPU_LABEL), (wall.id, WALL_LABEL)):
            rows = match_rows(db, tid)
            assert len(rows) == 2 and {r["status"] for r in rows} == {"finished"}, rows
            for r in rows:
                header = json.loads(load_replay(db, r["id"]).splitlines()[0])
                assert header["time_control"] == label, (tid, header)
                sleepy = r["seat_terminations"][r["bots"].index("sleepy")]
                if tid == cpu.id:
                    assert sleepy in (MatchEnd.NORMAL, MatchEnd.ROUND_CAP), r
                else:
                    assert sleepy == Reason.TIMEOUT, r
            row = web_tournament(db, tid)  # the web page and its JSON say which clock
            assert row is not None and row.time_control == label
            assert row.to_json()["cpu_clock"] is (tid == cpu.id)
    finally:
        db.close()
    shown = run_cli(arena_home, url, "tournament", "show", str(cpu.id)).stdout
    assert f"seed 7, {CPU_LABEL}, rules" in shown


@pytest.mark.parametrize(("move", "bank"), [(math.inf, 1.0), (1.0, math.inf), (math.nan, 1.0), (1e9, 1.0)])
def test_a_time_control_out_of_bounds_is_refused(move: float, bank: float) -> None:
    """``--move-time inf`` passed the CLI's lower bound: every seat then crashed on 'cannot
    convert float infinity to integer' (the wire carries 32-bit milliseconds)."""
    with pytest.raises(ValueError, match="at most 86400 s"):
        TimeControl(move, bank)
    assert TimeControl(86_400.0, 864_000.0).describe() == "86400s + 864000s bank"


def test_a_stored_tournament_out_of_bounds_is_shown_and_refused_in_one_line(
    sqlite_url: str, tmp_path: Path, arena_home: Path
) -> None:
    """A tournament an earlier version stored with an infinite move time: 'show' lists it, and
    'start' says in one line why it cannot be played (it was a traceback)."""
    db = Database(sqlite_url)
    add_bot(db, "greedy", sample("greedy"))
    add_bot(db, "random", sample("random"))
    t = create(db, ["greedy", "random"], games=1, seed=3)
    with db.session() as session:
        session.execute(text("UPDATE tournament SET move_time = :inf"), {"inf": math.inf})
        session.commit()
    db.close()
    shown = cli_inproc(arena_home, sqlite_url, "tournament", "show", str(t.id))
    assert "move time inf s, bank 10 s (out of bounds: cannot be played)" in shown.stdout
    started = cli_inproc(arena_home, sqlite_url, "tournament", "start", str(t.id), code=1)
    assert "cannot be played: its stored time control is out of bounds" in started.stderr
    assert "create a new tournament" in started.stderr and "Traceback" not in started.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["match", "greedy", "random", "--move-time", "inf"],
        ["tournament", "create", "greedy", "random", "--bank", "inf"],
        ["evaluate", "greedy", "--vs", "random", "--move-time", "1e9"],
        ["tournament", "run", "greedy", "random", "--jobs", "100000000000"],
        ["leaderboard", "publish", "sample", "--jobs", "5000"],
    ],
)
def test_time_and_jobs_options_have_upper_bounds(sqlite_url: str, arena_home: Path, args: list[str]) -> None:
    out = cli_inproc(arena_home, sqlite_url, *args, code=2)
    assert "Input should be less than or equal to" in " ".join(out.stderr.split()), out.stderr
