"""Shared helpers of the integration tests: real referee, real gRPC, real bot processes.

Every test here that launches bots must leave no process behind.  Three guards check that:

* conftest.py makes the test process the child subreaper, so any orphaned descendant (a bot
  left behind by the ``arena`` command or by bubblewrap) becomes a child of the test process;
* the autouse fixture ``no_surviving_children`` (conftest.py) snapshots the test process's
  children (``/proc/*/stat`` with ``ppid == os.getpid()``) before and after each test;
* :class:`PidRecorder` (an ``on_event`` hook for ``play_local_match``) records the bot pids
  while the match runs, so a test can assert that exactly those processes and their process
  groups are gone afterwards (:func:`assert_reaped`)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import grpc

from arena.engine import GreedyPolicy, replay
from arena.referee import MatchResult
from arena.referee.match import Match
from arena.v1 import arena_pb2 as pb
from arena.wire import state_from_pb

Call = grpc.aio.StreamStreamCall[Any, pb.RefereeMessage]  # a raw Play stream

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
FAULTY = BOTS / "faulty"
TRIVIAL_BOT = ROOT / "benchmarks" / "trivial_bot.py"
PLAY_METHOD = "/arena.v1.Referee/Play"
TOKEN_KEY = "arena-token"


# ---------------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of ``pid`` from /proc, or None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[2])


def _all_pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def child_pids(*, include_zombies: bool = True) -> set[int]:
    """Pids whose parent is this (test) process."""
    me = os.getpid()
    out = set()
    for pid in _all_pids():
        st = _stat(pid)
        if st is not None and st[1] == me and (include_zombies or st[0] not in ("Z", "X")):
            out.add(pid)
    return out


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def group_members(pgids: Iterable[int]) -> set[int]:
    """Live (non-zombie) processes in any of the process groups ``pgids``."""
    wanted = set(pgids)
    out = set()
    for pid in _all_pids():
        st = _stat(pid)
        if st is not None and st[2] in wanted and st[0] not in ("Z", "X"):
            out.add(pid)
    return out


def assert_reaped(pids: Iterable[int], *, wait: float = 3.0) -> None:
    """Every process in ``pids`` is gone (or a zombie), and so is everything in their groups.

    Bots run in their own process group (pgid == pid), so the group check also catches a
    grandchild a bot might have left behind.
    """
    pids = set(pids)
    assert pids, "no bot pid was recorded: the test did not launch what it meant to"
    deadline = time.monotonic() + wait
    while True:
        alive = {p for p in pids if is_alive(p)} | group_members(pids)
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not alive, f"bot processes survived their match: {sorted(alive)}"
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        # Still in the process table: acceptable only as an unreaped zombie.
        st = _stat(pid)
        assert st is None or st[0] in ("Z", "X"), f"pid {pid} is still running ({st})"


class PidRecorder:
    """An ``on_event`` hook: records this process's children when the match's first event
    happens (``play_local_match`` starts every bot before the match begins). Children that
    were already running when the recorder was made (e.g. a multiprocessing helper left by an
    earlier test in the same session) are not this match's bots and are left out."""

    def __init__(self) -> None:
        self.pids: set[int] = set()
        self.calls = 0
        self._before = child_pids()

    def __call__(self, match: Match) -> None:
        self.calls += 1
        if self.calls == 1:
            self.pids = child_pids(include_zombies=False) - self._before


# ---------------------------------------------------------------------- results and replays


def replay_result(result: MatchResult) -> dict[str, Any]:
    """Verify ``result.replay`` through the engine and return its result line."""
    rep = replay(result.replay)  # raises ReplayError if it does not replay exactly
    assert rep.result["scores"] == list(result.scores)
    assert rep.result["placings"] == list(result.placings)
    assert rep.result["termination"] == result.termination
    return rep.result


# Measured times in a record: per decision ("ms" wall, "cpu_ms" CPU) and on the result line
# (per seat totals).  Everything else in a record is a function of the seed and the bots.
TIMING_KEYS = ("ms", "cpu_ms", "think_s", "cpu_s")


def strip_ms(record: str) -> list[dict[str, Any]]:
    """The record's lines as JSON, without the measured times."""
    out = []
    for line in record.splitlines():
        obj = json.loads(line)
        for key in TIMING_KEYS:
            obj.pop(key, None)
        out.append(obj)
    return out


def competition_placings(scores: Iterable[int]) -> list[int]:
    """Standard competition ranking (R28): 1 + the number of strictly better scores."""
    pts = list(scores)
    return [1 + sum(1 for t in pts if t > s) for s in pts]


# ---------------------------------------------------------------------- raw gRPC clients


def open_play(
    channel: grpc.aio.Channel,
    token: str | None,
    *,
    serializer: Any = None,
) -> Call:
    """Open a raw Play stream (``token`` None: no metadata at all)."""
    stub = channel.stream_stream(
        PLAY_METHOD,
        request_serializer=serializer or pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )
    metadata = None if token is None else ((TOKEN_KEY, token),)
    return stub(metadata=metadata)


_GREEDY = GreedyPolicy()


def greedy_answer(request: pb.DecisionRequest) -> pb.BotMessage:
    """The greedy policy's answer to ``request`` (it ends games quickly; the first legal action
    would pass every turn and play to the round cap)."""
    action = _GREEDY.choose(state_from_pb(request.state))
    assert str(action) in request.legal_actions
    return pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=str(action)))


async def play_stream(call: Call, received: list[pb.RefereeMessage] | None = None) -> list[pb.RefereeMessage]:
    """Play ``call`` to its end with greedy answers; return every message received (appended to
    ``received`` when given, e.g. one already read)."""
    received = [] if received is None else received
    if received and received[-1].HasField("request"):
        await call.write(greedy_answer(received[-1].request))
    while True:
        message = await call.read()
        if message is grpc.aio.EOF:
            return received
        assert isinstance(message, pb.RefereeMessage)
        received.append(message)
        if message.HasField("request"):
            await call.write(greedy_answer(message.request))


def kinds(messages: Iterable[pb.RefereeMessage]) -> list[str]:
    """The message kinds, with runs of requests collapsed: ["welcome", "request", "result"]."""
    out: list[str] = []
    for m in messages:
        kind = m.WhichOneof("message")
        if not (out and out[-1] == kind == "request"):
            out.append(kind)
    return out


async def expect_refused(call: Call) -> grpc.StatusCode:
    """Read ``call`` until it fails; return the status code (fails if a message arrives)."""
    try:
        message = await call.read()
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    if message is not grpc.aio.EOF:
        raise AssertionError(f"expected a refusal, got a message: {message}")
    raise AssertionError(f"the stream ended without an error: {await call.code()}")
