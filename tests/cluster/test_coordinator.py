"""The shared coordinator loop with a scripted executor: lost matches go back to the queue and
are recorded once, a match lost too often is recorded as failed, duplicates are no-ops."""

from __future__ import annotations

import signal
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import pytest

from arena.lifecycle import Stopped
from arena.referee import MatchResult
from arena.referee.result import SeatOutcome
from arena.store.bots import add_bot
from arena.store.db import Database, StoreError
from arena.store.tournaments import MatchTask, get_tournament, status_counts
from arena.tournament.display import stopped_message
from arena.tournament.runner import (
    MAX_REQUEUES,
    Outcome,
    Progress,
    Requeue,
    RunOver,
    coordinate,
    open_run,
    record,
)
from arena.tournament.service import create

from .helpers import REPO, TOTAL, match_rows, setup_tournament


def fake_result(task: MatchTask) -> MatchResult:
    """A made-up result: seat i scores 10 + i (the last seat wins)."""
    n = len(task.seats)
    seats = tuple(
        SeatOutcome(i, s.name, 10 + i, n - i, "normal", "", 0.1, 0.05, 3) for i, s in enumerate(task.seats)
    )
    return MatchResult(task.key, task.seed, n, "normal", seats, f"replay of {task.key}\n")


@dataclass
class ScriptedExecutor:
    """Plays instantly; ``lose`` says how many times each match id is lost first."""

    lose: dict[int, int]
    submitted: list[int] = field(default_factory=list)
    pending: dict[int, MatchTask] = field(default_factory=dict)
    closed: bool = False

    def slots(self) -> int:
        return 3

    def submit(self, task: MatchTask) -> Hashable:
        self.submitted.append(task.match_id)
        handle = len(self.submitted)
        self.pending[handle] = task
        return handle

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Outcome]]:
        handle = handles[0]
        assert isinstance(handle, int)
        task = self.pending.pop(handle)
        if self.lose.get(task.match_id, 0) > 0:
            self.lose[task.match_id] -= 1
            return [(handle, Requeue("workers died: scripted"))]
        return [(handle, fake_result(task))]

    def restart(self) -> None:
        raise AssertionError("not broken")

    def close(self) -> None:
        self.closed = True


def test_lost_matches_are_replayed_and_recorded_once(db: Database) -> None:
    tid = setup_tournament(db, sandbox=False)
    tasks = open_run(db, tid)
    first, second, hopeless = (t.match_id for t in tasks[:3])
    executor = ScriptedExecutor({first: 1, second: MAX_REQUEUES, hopeless: MAX_REQUEUES + 1})
    seen: list[Progress] = []
    coordinate(db, tid, tasks, executor, progress=seen.append)
    assert executor.closed
    assert executor.submitted.count(first) == 2
    assert executor.submitted.count(second) == MAX_REQUEUES + 1
    assert executor.submitted.count(hopeless) == MAX_REQUEUES + 1
    rows = {r["id"]: r for r in match_rows(db, tid)}
    assert rows[hopeless]["status"] == "failed"
    assert all(r["status"] == "finished" and r["replays"] == 1 for i, r in rows.items() if i != hopeless)
    assert status_counts(db, tid) == {"finished": TOTAL - 1, "failed": 1}
    start, *finished = seen  # told once when the run starts (no result), then after every match
    assert start.last is None and start.done == 0 and start.total == TOTAL
    assert all(p.last is not None for p in finished)
    assert len(finished) == TOTAL - 1 and seen[-1].done == TOTAL - 1 and seen[-1].total == TOTAL
    assert get_tournament(db, tid).status == "finished"


def test_a_second_result_is_a_no_op(db: Database) -> None:
    tid = setup_tournament(db, sandbox=False)
    task = open_run(db, tid)[0]
    assert record(db, task.match_id, fake_result(task)) is True
    before = match_rows(db, tid)
    other = MatchResult(task.key, task.seed, 2, "normal", tuple(reversed(fake_result(task).seats)), "x\n")
    assert record(db, task.match_id, other) is False
    assert match_rows(db, tid) == before
    with pytest.raises(StoreError):  # an unknown match is still an error
        record(db, 10_000, fake_result(task))


def test_stop_after(db: Database) -> None:
    tid = setup_tournament(db, sandbox=False)
    executor = ScriptedExecutor({})
    coordinate(db, tid, open_run(db, tid), executor, stop_after=5)
    assert status_counts(db, tid) == {"finished": 5, "queued": TOTAL - 5}
    assert get_tournament(db, tid).status == "running"


@dataclass
class AbortableExecutor(ScriptedExecutor):
    """A :class:`ScriptedExecutor` that says whether it was aborted (stopped at once)."""

    aborted: bool = False

    def abort(self) -> None:
        self.aborted = True


def test_a_puller_that_ends_the_run_closes_the_executor(db: Database) -> None:
    """A puller's RunOver (the ladder's --max-tables) ends the run like a finished format: what is
    in flight is played and recorded, the executor is closed and not aborted (a local pool's
    workers are let go, not sent SIGTERM), and the tournament is not marked finished."""
    tid = setup_tournament(db, sandbox=False)
    tasks = open_run(db, tid)
    executor = AbortableExecutor({})
    asked: list[int] = []

    def puller(db: Database, tournament_id: int) -> list[MatchTask] | None:
        asked.append(len(executor.pending))
        raise RunOver("this run has had its share")

    with pytest.raises(RunOver, match="its share"):
        coordinate(db, tid, tasks, executor, puller=puller)
    assert asked[0] > 0 and asked[-1] == 0  # first asked with matches in flight: they were played
    assert executor.closed and not executor.aborted
    assert status_counts(db, tid) == {"finished": TOTAL}
    assert get_tournament(db, tid).status == "running"


def test_a_swiss_reports_progress_out_of_all_its_rounds(db: Database) -> None:
    """A Swiss stores one round at a time: the progress said '4/4', '8/8', '12/12' (each round
    as if it were the whole tournament); it counts out of all three rounds' 12 from the start."""
    tid = _swiss(db, ["greedy-naive", "search"])
    seen: list[Progress] = []
    coordinate(db, tid, open_run(db, tid), ScriptedExecutor({}), progress=seen.append)
    assert status_counts(db, tid) == {"finished": 12}
    assert [p.total for p in seen] == [12] * 13
    assert [p.done for p in seen] == list(range(13))


def test_a_swiss_stopped_between_rounds_is_not_called_done(db: Database) -> None:
    """After round 1 of 3, before round 2 is made, nothing is queued: the stop message said
    'nothing left to play' for a Swiss two rounds short."""
    tid = _swiss(db, ["greedy-naive"])
    for task in open_run(db, tid):
        assert record(db, task.match_id, fake_result(task))
    message = stopped_message(db, tid, Stopped(signal.SIGTERM))
    assert "4 of 12 matches finished" in message and "nothing left to play" not in message
    assert f"resume with 'arena tournament resume {tid}'" in message


def _swiss(db: Database, more: list[str]) -> int:
    """A three-round Swiss at two-player tables of the standard bots and the samples ``more``."""
    setup_tournament(db, sandbox=False)  # registers the standard bots
    for name in more:
        add_bot(db, name, REPO / "bots" / f"{name.replace('-', '_')}_bot.py")
    t = create(db, ["greedy", "invader", "random", *more], fmt="swiss", table_sizes=(2,), games=1, seed=3,
               rounds=3, sandbox=None)  # fmt: skip
    assert t.id is not None
    return t.id
