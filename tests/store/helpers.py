"""Helpers for the store tests: the CLI as a subprocess, bot files, /proc scans, row snapshots."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect, text
from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import Bot, BotVersion, Match, MatchSeat, Replay

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "bots"
ARENA = Path(sys.executable).parent / "arena"
SAMPLES = ("greedy", "invader", "random")
SLEEPY_BOT = """
import time
from arena.sdk import Bot, run

class Sleepy(Bot):
    name = "sleepy"
    def choose(self, state, legal):
        time.sleep(0.05)
        return legal[0]

if __name__ == "__main__":
    run(Sleepy())
"""
"""A bot's source that answers every decision after 50 ms (a match of it lasts some seconds)."""


def sample(name: str) -> Path:
    """A sample bot file in bots/."""
    return BOTS / f"{name}_bot.py"


def bot_copy(folder: Path, name: str, extra: str = "") -> Path:
    """A copy of the greedy sample bot (with ``extra`` appended as a comment: a distinct version)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    body = sample("greedy").read_text(encoding="utf-8")
    path.write_text(body + (f"# {extra}\n" if extra else ""), encoding="utf-8")
    return path


def arena_env(home: Path, url: str) -> dict[str, str]:
    """The environment for a CLI subprocess: this test's data folder and database."""
    env = dict(os.environ)
    env["ARENA_HOME"] = str(home)
    env["ARENA_DATABASE_URL"] = url
    env.pop("COLUMNS", None)
    return env


def run_cli(
    home: Path, url: str, *args: str, code: int | None = 0, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run ``arena ARGS`` to completion; check its exit status when ``code`` is not None."""
    proc = subprocess.run(
        [str(ARENA), *args],
        env=arena_env(home, url),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=home,
    )
    if code is not None:
        assert proc.returncode == code, (
            f"arena {' '.join(args)}: exit {proc.returncode}, expected {code}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    if proc.returncode != 0:
        assert "Traceback" not in proc.stderr, f"arena {' '.join(args)} crashed:\n{proc.stderr}"
    return proc


def cli_inproc(home: Path, url: str, *args: str, code: int | None = 0) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` run in this process (Typer's runner): the same commands and messages as
    :func:`run_cli` without a second of interpreter start-up per call."""
    from typer.testing import CliRunner

    from arena.cli.main import app

    result = CliRunner().invoke(app, list(args), env={"ARENA_HOME": str(home), "ARENA_DATABASE_URL": url})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"arena {' '.join(args)} crashed: {result.exception!r}") from result.exception
    if code is not None:
        assert result.exit_code == code, (
            f"arena {' '.join(args)}: exit {result.exit_code}, expected {code}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def processes_with(marker: str) -> dict[int, str]:
    """Live processes (not zombies: their cmdline is empty) whose command line contains ``marker``."""
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


def table_counts(url: str) -> dict[str, int]:
    """Rows per table (every table in the database, alembic_version included), with a plain engine."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            names = sorted(inspect(conn).get_table_names())
            return {n: conn.execute(text(f'SELECT COUNT(*) FROM "{n}"')).scalar_one() for n in names}
    finally:
        engine.dispose()


def alembic_version(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [r[0] for r in conn.execute(text("SELECT version_num FROM alembic_version"))]
    finally:
        engine.dispose()


def status_counts_plain(url: str, tournament_id: int) -> dict[str, int]:
    """Match statuses counted with a plain engine (no write lock: safe while another process runs)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT status, COUNT(*) FROM match WHERE tournament_id = :t GROUP BY status"),
                {"t": tournament_id},
            ).all()
            return {str(s): int(n) for s, n in rows}
    finally:
        engine.dispose()


def match_rows(db: Database, tournament_id: int) -> list[dict[str, Any]]:
    """Every match of a tournament by ordinal: status, seed, seats (bot names, scores, placings),
    attempts and how many replays it has."""
    with db.session() as session:
        names = {
            v.id: b.name
            for v, b in session.exec(
                select(BotVersion, Bot).where(col(BotVersion.bot_id) == col(Bot.id))
            ).all()
        }
        matches = session.exec(
            select(Match).where(Match.tournament_id == tournament_id).order_by(col(Match.ordinal))
        ).all()
        out = []
        for m in matches:
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
                    "group": m.group_key,
                    "attempts": m.attempts,
                    "bots": tuple(names[s.bot_version_id] for s in seats),
                    "versions": tuple(s.bot_version_id for s in seats),
                    "seats": [s.seat for s in seats],
                    "scores": tuple(s.score for s in seats),
                    "placings": tuple(s.placing for s in seats),
                    "seat_terminations": tuple(s.termination for s in seats),
                    "replays": len(replays),
                    "replay_sha": replays[0].sha256 if replays else None,
                }
            )
        return out


def outcome(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must be equal between two runs of one schedule, by ordinal."""
    return [
        (r["ordinal"], r["seed"], r["group"], r["bots"], r["scores"], r["placings"], r["termination"])
        for r in rows
    ]


def table_rows(output: str) -> list[list[str]]:
    """The body rows of a rich table printed by the CLI, as stripped cells."""
    rows = []
    for line in output.splitlines():
        if line.startswith("│") and line.rstrip().endswith("│"):
            rows.append([c.strip() for c in line.strip().strip("│").split("│")])
    return rows
