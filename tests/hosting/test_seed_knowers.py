"""No process that has seen a seed's dice lives on while another seating of that seed is played.

Every seating of a seed throws the same dice, and the coordinator never plays two matches of one
seed at once (``hosting/test_seed_apart.py``): two copies of one program could otherwise pass the
throws from the seating ahead to the other through the machine's load.  But a kept-running bot
process outlived its match: on a tournament of three workers, the process that had played a
seed's first seating on one worker was still running (idle, or playing another match) while the
next seating of that seed was played on another worker, knowing every throw of it.  Now a match
whose seed has another seating to come stops its kept-running bots before its result is handed
back (``MatchTask.seed_again``).  Real sandboxed bots in a real tournament; each bot's log says
when it knew which dice and how long it lived (``witness_bot.py``)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from arena.sandbox import SandboxLimits, bwrap_problem
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

HERE = Path(__file__).resolve().parent
BOTS = ("wa", "wb", "wc", "wd")

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap: {bwrap_problem()}")


def _overlaps(logs: Path) -> tuple[int, list[str]]:
    """(games seen, each time a process knew a game's dice while another process played it)."""
    knew: dict[str, list[tuple[str, float]]] = defaultdict(list)  # dice -> (log, when known)
    last_alive: dict[str, float] = {}
    plays: list[tuple[str, float, str]] = []
    for log in sorted(logs.glob("*.stderr.log")):
        for line in log.read_text(errors="replace").splitlines():
            word, *rest = line.split() or [""]
            if word == "ALIVE" and rest:
                last_alive[log.name] = max(last_alive.get(log.name, 0.0), float(rest[0]))
            elif word == "KNOW" and len(rest) == 2:
                knew[rest[1]].append((log.name, float(rest[0])))
            elif word == "PLAY" and len(rest) == 2:
                plays.append((log.name, float(rest[0]), rest[1]))
    found = []
    for player, when, dice in plays:
        for knower, since in knew[dice]:
            if knower != player and since < when < last_alive.get(knower, 0.0):
                found.append(
                    f"{knower} knew the dice {dice[:12]}... since {when - since:.2f} s and lived "
                    f"{last_alive[knower] - when:.2f} s more while {player} played them"
                )
    return len(plays), found


def test_no_process_that_knows_a_seeds_dice_lives_while_another_seating_plays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = (tmp_path / "home").resolve()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    db = Database()
    try:
        for name in BOTS:
            add_bot(db, name, HERE / "witness_bot.py")  # kept running (the default)
        t = create(db, list(BOTS), fmt="round-robin", table_sizes=(3,), games=2, seed=8,
                   move_time=2.0, bank=20.0, sandbox=SandboxLimits())  # fmt: skip
        assert t.id is not None
        run_tournament(db, t.id, jobs=3)
    finally:
        db.close()
    plays, overlaps = _overlaps(home / "logs" / f"tournament-{t.id}")
    assert plays == 4 * 2 * 3 * 3  # 4 tables x 2 seeds x 3 seatings x 3 seats: every log was read
    assert not overlaps, "\n".join(overlaps)
