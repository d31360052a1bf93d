"""A tournament worker process starts light (issue 20): importing what a worker needs to play a
match (the worker module, the task it is handed) loads neither SQLAlchemy nor the store's models,
which took most of a worker's start-up."""

from __future__ import annotations

import subprocess
import sys


def test_worker_imports_no_database_layer() -> None:
    code = (
        "import sys, arena.tournament.worker, arena.tournament.task\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'sqlmodel', 'alembic')"
        " or m.startswith('arena.store'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_store_still_names_the_task_types() -> None:
    from arena.store import tournaments
    from arena.tournament import task

    assert tournaments.MatchTask is task.MatchTask and tournaments.SeatTask is task.SeatTask
    assert tournaments.pack_replay is task.pack_replay
