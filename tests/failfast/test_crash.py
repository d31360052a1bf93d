"""A broken bot is reported at once, with its error: ``arena match`` as a user runs it.

Real console script, real bot processes (sandboxed and not), real gRPC, real SQLite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlmodel import select

from arena.store.db import Database
from arena.store.models import Match, MatchSeat
from arena.store.tournaments import load_replay

from .helpers import CRASHES_MID_MATCH, EXITS_3, RAISES_AT_IMPORT, SYNTAX_ERROR, Run, arena, write_bot

# seconds from command start to exit, for a bot that cannot even start: the fault this guards
# against waited out the 20 s no-show timeout, so the bound sits well below that and well above
# a loaded machine's sandboxed start (2.3 s seen at load 20, where the limit was 2 s)
LIMIT = 6.0
ATTEMPTS = 3  # the machine is shared: the best of a few runs is the one measured
# On a machine so loaded that even a trivial command of the same imports is slow, the match may
# take at most this many times as long as that command (the old code took 20 s: the no-show wait).
# (Not 'arena bots list': it reads the database without the ORM since issue 13 and is no baseline.)
BASELINE_RATIO = 2.5


def _seat(home: Path, match_id: int, seat: int) -> MatchSeat:
    db = Database()
    try:
        with db.session() as session:
            row = session.exec(
                select(MatchSeat).where(MatchSeat.match_id == match_id, MatchSeat.seat == seat)
            ).one()
        return row
    finally:
        db.close()


def _match_seconds(match_id: int) -> float:
    """How long the stored match took, from its start to its end: the referee's own time, without the
    command's start-up, so a loaded machine does not make it look like the old 20 s no-show wait."""
    db = Database()
    try:
        with db.session() as session:
            match = session.get(Match, match_id)
            assert match is not None and match.started_at is not None and match.finished_at is not None
            return (match.finished_at - match.started_at).total_seconds()
    finally:
        db.close()


# The referee's no-show wait (arena match's connect timeout): a bot that exits before connecting must
# be reported well before it.
NO_SHOW_WAIT = 20.0


def _stored_forfeit(match_id: int) -> dict[str, object]:
    db = Database()
    try:
        last = json.loads(load_replay(db, match_id).splitlines()[-1])
    finally:
        db.close()
    [forfeit] = last["forfeits"]
    assert isinstance(forfeit, dict)
    return forfeit


# What ``arena match`` does before and besides playing, without playing: the interpreter, the
# imports of the command and the store, opening the database, and starting one Python process
# (the bot's). The match may take BASELINE_RATIO times as long as this on a loaded machine.
_BASELINE = """
import subprocess, sys
import arena.cli.main, arena.cli.match_cmd, arena.store.tournaments, arena.store.adhoc
from arena.store.db import Database
Database().close()
subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


def _baseline(home: Path, cwd: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_DATABASE_URL", "ARENA_SANDBOX")}
    env["ARENA_HOME"] = str(home)
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", _BASELINE], cwd=cwd, env=env, check=True, timeout=120)
    return time.monotonic() - start


def _fastest(args: list[str], home: Path, cwd: Path) -> tuple[Run, float]:
    """The fastest of up to ATTEMPTS runs of ``arena ARGS``, and the fastest run of the baseline
    (:data:`_BASELINE`: the same start-up, imports and database, plays nothing)."""
    Database().close()  # the database exists already (creating it is a first run's extra cost)
    runs: list[Run] = []
    base: list[float] = []
    for _ in range(ATTEMPTS):
        run = arena(*args, home=home, cwd=cwd)
        runs.append(run)
        base.append(_baseline(home, cwd))
        if run.seconds < LIMIT:
            break
    return min(runs, key=lambda r: r.seconds), min(base)


def test_syntax_error_bot_ends_the_match_at_once(home: Path, tmp_path: Path, sandbox_args: list[str]) -> None:
    bad = write_bot(tmp_path / "src", "bad.py", SYNTAX_ERROR)
    run, baseline = _fastest(["match", str(bad), "random", "--seed", "1", *sandbox_args], home, tmp_path)
    assert run.code == 3, run.stderr  # played, and a bot forfeited
    assert run.seconds < max(LIMIT, BASELINE_RATIO * baseline), (
        f"arena match took {run.seconds:.2f}s (limit {LIMIT}s; "
        f"the same start-up without playing took {baseline:.2f}s)"
        f"\n{run.stderr}"
    )
    line = next(x for x in run.stderr.splitlines() if x.startswith("seat 0 (bad) forfeited"))
    assert line.startswith(
        "seat 0 (bad) forfeited: crashed: the process exited with status 1 before connecting: SyntaxError: "
    ), line  # said once, with the exception line ("'(' was never closed" on Python 3.11)
    assert "| SyntaxError:" in run.stderr  # the last lines of its stderr follow
    assert "def choose(state, legal:" in run.stderr
    assert "Traceback" not in run.stderr.split("forfeited")[0]  # no traceback of the arena itself
    # stored with the forfeit: the seat's detail and the replay's evidence
    seat = _seat(home, 1, 0)
    assert seat.termination == "crashed" and seat.detail is not None and "SyntaxError" in seat.detail
    forfeit = _stored_forfeit(1)
    assert forfeit["reason"] == "crashed"
    evidence = forfeit["evidence"]
    assert isinstance(evidence, dict) and "SyntaxError" in str(evidence["stderr_tail"])


def test_bot_raising_at_import_shows_its_exception(
    home: Path, tmp_path: Path, sandbox_args: list[str]
) -> None:
    bot = write_bot(tmp_path / "src", "grumpy.py", RAISES_AT_IMPORT)
    run = arena("match", "random", str(bot), "--seed", "2", *sandbox_args, home=home, cwd=tmp_path)
    assert run.code == 3, run.stderr
    assert _match_seconds(1) < NO_SHOW_WAIT / 2, run.stderr  # not the 20 s no-show wait
    assert (
        "seat 1 (grumpy) forfeited: crashed: the process exited with status 1 before connecting: "
        "RuntimeError: no swimming today"
    ) in run.stderr
    assert "| warming up the pool" in run.stderr and "| RuntimeError: no swimming today" in run.stderr
    assert _seat(home, 1, 0).termination != "crashed"  # random won; only the broken seat forfeited
    assert _seat(home, 1, 1).detail == (
        "the process exited with status 1 before connecting: RuntimeError: no swimming today"
    )


def test_bot_exiting_3_before_connecting(home: Path, tmp_path: Path, sandbox_args: list[str]) -> None:
    bot = write_bot(tmp_path / "src", "leaver.py", EXITS_3)
    run = arena("match", str(bot), "greedy", "--seed", "3", *sandbox_args, home=home, cwd=tmp_path)
    assert run.code == 3, run.stderr
    assert _match_seconds(1) < NO_SHOW_WAIT / 2, run.stderr  # not the 20 s no-show wait
    assert "seat 0 (leaver) forfeited: crashed: the process exited with status 3 before connecting\n" in (
        run.stderr
    )
    assert _stored_forfeit(1)["detail"] == "the process exited with status 3 before connecting"


def test_a_bot_killed_by_a_signal_says_which(home: Path, tmp_path: Path, sandbox_args: list[str]) -> None:
    """Unsandboxed the signal is known; in the sandbox bubblewrap passes a death by signal N on as
    status 128 + N, and the detail says what that likely was."""
    bot = write_bot(tmp_path / "src", "segv.py", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    run = arena("match", str(bot), "greedy", "--seed", "3", *sandbox_args, home=home, cwd=tmp_path)
    assert run.code == 3, run.stderr
    detail = _stored_forfeit(1)["detail"]
    if sandbox_args:  # --no-sandbox
        assert detail == "the process was killed by SIGSEGV before connecting", detail
    else:
        assert detail == "the process exited with status 139 (likely killed by SIGSEGV) before connecting", (
            detail
        )


def test_crash_mid_match_is_said_once_with_the_exception(
    home: Path, tmp_path: Path, sandbox_args: list[str]
) -> None:
    bot = write_bot(tmp_path / "src", "crasher.py", CRASHES_MID_MATCH)
    run = arena("match", str(bot), "random", "--seed", "4", *sandbox_args, home=home, cwd=tmp_path)
    assert run.code == 3, run.stderr
    line = next(x for x in run.stderr.splitlines() if x.startswith("seat 0 (crasher) forfeited"))
    assert line == (
        "seat 0 (crasher) forfeited: crashed: the process exited with status 1: "
        "ZeroDivisionError: division by zero"
    ), line
    assert "the stream ended" not in run.stderr
    assert "| ZeroDivisionError: division by zero" in run.stderr


def test_a_match_without_forfeits_exits_0(home: Path, tmp_path: Path) -> None:
    run = arena("match", "greedy", "random", "--seed", "5", "--no-sandbox", home=home, cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert "forfeited" not in run.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (./dev test installs it)")
def test_a_node_bot_missing_a_module_is_told_which(home: Path, tmp_path: Path) -> None:
    """A real Node.js bot process that cannot load its gRPC library: the forfeit names the module
    (it used to end with the ``}`` of Node's printed error object)."""
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    bot = tmp_path / "lone" / "bot.js"
    bot.parent.mkdir()
    bot.write_text("const grpc = require('@grpc/grpc-js-not-installed-here');\n")
    run = arena("match", str(bot), "random", "--seed", "1", "--no-sandbox", home=home, cwd=tmp_path)
    assert run.code == 3, run.stderr
    line = next(x for x in run.stderr.splitlines() if x.startswith("seat 0 (bot) forfeited"))
    assert line == (
        "seat 0 (bot) forfeited: crashed: the process exited with status 1 before connecting: "
        "Error: Cannot find module '@grpc/grpc-js-not-installed-here'"
    ), (version, run.stderr)


def test_a_call_grpc_refuses_under_arena_match_is_disconnected_at_once(tmp_path: Path) -> None:
    """``bots/faulty/badencoding_bot.py`` opens its stream with an unknown grpc-encoding: C-core
    refuses the call with a trailers-only error, and the referee's request stream sometimes
    stayed open (about one run in three): the seat waited out its 30 s move and forfeited on
    ``timeout``.  Now every run ends at once as ``disconnected``."""
    bot = Path(__file__).resolve().parents[2] / "bots" / "faulty" / "badencoding_bot.py"
    for run in range(6):
        home = tmp_path / f"home{run}"
        done = arena(
            "match", "greedy", str(bot), "--no-sandbox", "--move-time", "30", "--bank", "0", "--quiet",
            home=home, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        out = done.stdout + done.stderr
        assert "forfeited: disconnected: the stream ended" in out, out
        assert done.seconds < 20, (done.seconds, out)


DEADLINE_BOT = """
import os, queue, threading, time
import grpc
from arena.v1 import arena_pb2 as pb, arena_pb2_grpc

answers = queue.Queue()

def replies():
    while True:
        yield answers.get()

stub = arena_pb2_grpc.RefereeStub(grpc.insecure_channel(os.environ["ARENA_ADDRESS"]))
# a deadline on the match's stream: the bot's own gRPC ends the call after 1.5 s
call = stub.Play(replies(), metadata=(("arena-token", os.environ["ARENA_TOKEN"]),), timeout=1.5)
try:
    for message in call:
        if message.WhichOneof("message") == "request":
            r = message.request
            time.sleep(0.05)  # the match outlasts the deadline
            reply = pb.ActionReply(request_id=r.request_id, action=r.legal_actions[0])
            answers.put(pb.BotMessage(action=reply))
except grpc.RpcError as exc:
    print("the call ended:", exc.code(), flush=True)
time.sleep(60)  # alive: the stream's end, not the process's, is what the referee sees
"""


def test_a_stream_ended_by_the_bots_own_deadline_says_so(
    home: Path, tmp_path: Path, sandbox_args: list[str]
) -> None:
    """A bot that opens its match's stream with a deadline (``timeout=`` in Python's gRPC, a
    ``grpc-timeout`` header) loses it when the deadline passes: the forfeit says that, not the
    keepalive advice of a stream that just ended (an outside review)."""
    bot = write_bot(tmp_path / "src", "hasty.py", DEADLINE_BOT)
    run = arena(
        "match",
        str(bot),
        "random",
        "--seed",
        "3",
        "--move-time",
        "10",
        *sandbox_args,
        home=home,
        cwd=tmp_path,
    )
    assert run.code == 3, run.stderr
    line = next(x for x in run.stderr.splitlines() if x.startswith("seat 0 (hasty) forfeited"))
    # the bot's 1.5 s deadline as the header carries it: what is left of it when gRPC sends the
    # headers (1.4 s was seen on a loaded machine)
    assert re.fullmatch(
        r"seat 0 \(hasty\) forfeited: disconnected: the stream ended at its own deadline: the bot opened "
        r"it with a gRPC deadline of 1\.[0-5] s \(grpc-timeout; e\.g\. timeout= in Python\); a match's "
        r"stream must have none",
        line,
    ), line
