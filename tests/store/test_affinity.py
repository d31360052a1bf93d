"""Local workers pinned to cores (arena.tournament.affinity): which tournaments pin, and a real
``--jobs 2`` tournament whose two workers, and the bots each starts, keep to a core each."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.tournament import affinity
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

from .helpers import match_rows

BOT = Path(__file__).with_name("affinity_bot.py")


@pytest.mark.parametrize(
    ("jobs", "cores", "pin", "env", "expected"),
    [
        (2, (0, 1), None, None, (0, 1)),
        (2, (3, 5, 7), None, None, (3, 5)),  # the cores this process may use, not 0..n-1
        (4, (0, 1, 2, 3), None, "1", (0, 1, 2, 3)),
        (1, (0, 1), None, None, None),  # one worker: nothing to keep apart
        (3, (0, 1), None, None, None),  # more workers than cores: pinning would unbalance them
        (2, (0, 1), False, None, None),
        (2, (0, 1), None, "0", None),
        (2, (0, 1), True, "0", (0, 1)),  # the caller's choice over the environment
    ],
)
def test_which_pools_pin(
    monkeypatch: pytest.MonkeyPatch,
    jobs: int,
    cores: tuple[int, ...],
    pin: bool | None,
    env: str | None,
    expected: tuple[int, ...] | None,
) -> None:
    monkeypatch.setattr(affinity, "allowed_cores", lambda: cores)
    if env is None:
        monkeypatch.delenv(affinity.PIN_ENV, raising=False)
    else:
        monkeypatch.setenv(affinity.PIN_ENV, env)
    assert affinity.wanted(jobs, pin) == expected


def _bots_cores(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pin: bool | None
) -> list[dict[str, list[int]]]:
    """Run a 2-player round robin of three affinity bots at --jobs 2; what each bot wrote."""
    out = tmp_path / f"cores-{pin}"
    out.mkdir()
    monkeypatch.setenv("AFFINITY_OUT", str(out))
    names = [f"aff-{pin}-{k}" for k in range(3)]
    for name in names:
        add_bot(db, name, BOT)
    t = create(db, names, table_sizes=(2,), games=2, seed=5, move_time=5.0, bank=30.0)
    assert t.id is not None
    run_tournament(db, t.id, jobs=2, pin=pin)
    assert all(r["status"] == "finished" for r in match_rows(db, t.id))
    return [json.loads(p.read_text()) for p in sorted(out.iterdir())]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_two_workers_and_their_bots_keep_a_core_each(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(affinity.PIN_ENV, raising=False)
    seen = _bots_cores(db, tmp_path, monkeypatch, None)
    assert len(seen) >= 2, seen  # 3 bots in 2-player tables: every worker started some
    allowed = sorted(os.sched_getaffinity(0))
    for s in seen:
        assert s["bot"] == s["worker"] and len(s["bot"]) == 1, s  # the bot inherited its worker's core
    assert {tuple(s["worker"]) for s in seen} == {(allowed[0],), (allowed[1],)}  # one core per worker

    unpinned = _bots_cores(db, tmp_path, monkeypatch, False)
    assert all(s["bot"] == allowed == s["worker"] for s in unpinned), unpinned
