"""Every deliberately broken bot in bots/faulty ends in its exact forfeit reason (README table),
while the match completes, the others are unharmed and the replay verifies."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.engine import replay
from arena.matchrunner import play_local_match, resolve_bot
from arena.referee import MatchResult, Reason, RefereeConfig, RefereeServer, TimeControl
from arena.referee.faults import process_forfeit
from arena.sandbox import BotProcess, SandboxLimits, bwrap_problem, launch_command

from .helpers import FAULTY, PidRecorder, assert_reaped, competition_placings, replay_result

FAST = TimeControl(move_time=0.5, bank=0.5)  # a timeout costs 1 s
FAULT_AT = "15"  # in 2-player games: past the 12 setup placements, in the middle of the game


@dataclass(frozen=True)
class Case:
    bot: str
    reason: Reason
    last_message: str | None = None


CASES = [
    Case("slow_bot.py", Reason.TIMEOUT),
    Case("illegal_bot.py", Reason.ILLEGAL_ACTION),
    Case("garbage_bot.py", Reason.MALFORMED_ACTION, last_message="jump into the pool!"),
    Case("quitter_bot.py", Reason.CRASHED),
    Case("closer_bot.py", Reason.DISCONNECTED),
    Case("freezer_bot.py", Reason.STALLED),
    Case("wrong_id_bot.py", Reason.MALFORMED_ACTION),
]


def play(
    names: list[str],
    control: TimeControl,
    *,
    seed: int = 4242,
    env: dict[str, str] | None = None,
    config: RefereeConfig | None = None,
    sandbox: SandboxLimits | None = None,
) -> tuple[MatchResult, float]:
    """Play a local match (faulty bots by file name, sample bots by name); return the result
    and its wall time, after checking that every bot process is gone."""
    specs = [resolve_bot(str(FAULTY / n)) if n.endswith(".py") else resolve_bot(n) for n in names]
    recorder = PidRecorder()
    start = time.monotonic()
    result = asyncio.run(
        play_local_match(
            specs,
            seed,
            control,
            config=config,
            on_event=recorder,
            extra_env=[dict(env or {}) for _ in names],
            sandbox=sandbox,
        )
    )
    elapsed = time.monotonic() - start
    assert len(recorder.pids) == len(names)
    assert_reaped(recorder.pids)
    return result, elapsed


def check_forfeit_record(result: MatchResult, seat: int, reason: Reason) -> dict[str, Any]:
    """The result line of the verified replay names the seat and the reason; returns the
    forfeit's entry."""
    line = replay_result(result)
    forfeits = line["forfeits"]
    assert [f["seat"] for f in forfeits] == [seat]
    entry: dict[str, Any] = forfeits[0]
    assert entry["reason"] == str(reason)
    assert entry["detail"]
    assert entry == result.forfeits[0].to_json()
    return entry


@pytest.mark.parametrize("case", CASES, ids=[c.bot.removesuffix("_bot.py") for c in CASES])
@pytest.mark.parametrize("faulty_seat", [0, 1])
def test_faulty_bot_two_players(case: Case, faulty_seat: int) -> None:
    check_two_players(case, faulty_seat)


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox here: {bwrap_problem()}")
@pytest.mark.parametrize("case", CASES, ids=[c.bot.removesuffix("_bot.py") for c in CASES])
def test_faulty_bot_in_the_sandbox(case: Case) -> None:
    """The same faults with every bot under bubblewrap (what `arena match` does by default):
    the launched process is the sandbox, not the bot, and the reasons must not change."""
    check_two_players(case, 1, sandbox=SandboxLimits())


def check_two_players(case: Case, faulty_seat: int, sandbox: SandboxLimits | None = None) -> None:
    names = ["greedy", "greedy"]
    names[faulty_seat] = case.bot
    other = 1 - faulty_seat
    control, config = FAST, None
    if case.reason is Reason.STALLED:
        # A long move time, so only the keepalive can notice the frozen bot in time.
        control = TimeControl(move_time=10.0, bank=0.0)
        config = RefereeConfig(keepalive_ms=300, keepalive_timeout_ms=300)
    result, elapsed = play(names, control, env={"FAULT_AT": FAULT_AT}, config=config, sandbox=sandbox)

    bad, good = result.seats[faulty_seat], result.seats[other]
    assert bad.termination == str(case.reason), bad.detail
    assert bad.placing == 2
    assert good.termination == "forfeit"  # the game stopped early: nobody left to play
    assert good.placing == 1
    assert good.detail == ""
    assert result.termination == "forfeit"
    assert len(result.forfeits) == 1
    forfeit = result.forfeits[0]
    assert forfeit.seat == faulty_seat and forfeit.reason is case.reason
    assert bad.detail == forfeit.detail
    # it played correctly until its fault (the freezer stops itself 50 ms after its fault,
    # and answers whatever it is asked in between)
    if case.reason is Reason.STALLED:
        assert bad.decisions >= int(FAULT_AT)
    else:
        assert bad.decisions == int(FAULT_AT) - 1

    entry = check_forfeit_record(result, faulty_seat, case.reason)
    evidence = forfeit.evidence
    # every one of these faults happens while the bot is deciding: its time is evidence
    assert "time_used_ms" in evidence, evidence
    assert entry["evidence"]["time_used_ms"] == evidence["time_used_ms"]
    if case.last_message is not None:
        assert evidence["last_message"] == case.last_message

    used = evidence.get("time_used_ms", 0.0)
    if case.reason is Reason.TIMEOUT:
        assert 1000 <= used < 4000, evidence  # move time + bank = 1 s
        assert "limit 1.000s" in forfeit.detail
    elif case.reason is Reason.STALLED:
        # keepalive 300 ms + 300 ms ping timeout: far sooner than the 10 s move time
        assert used < 5000, evidence
        # the whole match (bots' start-up included) ends before one move time has passed: a
        # referee that waited for the deadline could not (8 s here failed once: 8.6 s, loaded)
        assert elapsed < control.move_time, elapsed
        assert "stopped" in forfeit.detail
    elif case.reason is Reason.CRASHED:
        assert "leaving the pool" in evidence["stderr_tail"]
        assert "process" in forfeit.detail  # exited / is gone / exited with status 3
    elif case.bot == "wrong_id_bot.py":
        assert "never sent" in forfeit.detail
    elif case.reason is Reason.ILLEGAL_ACTION:
        assert evidence["last_message"] in ("take-five five-1", "place green-4a")
    if case.reason not in (Reason.TIMEOUT, Reason.STALLED):
        assert used < 1000, evidence  # an immediate fault, not a wait for the deadline


@pytest.mark.parametrize(
    ("names", "faulty_seat", "reason"),
    [
        (["greedy", "quitter_bot.py", "greedy"], 1, Reason.CRASHED),
        (["slow_bot.py", "greedy", "random", "greedy"], 0, Reason.TIMEOUT),
        (["greedy", "greedy", "random", "illegal_bot.py"], 3, Reason.ILLEGAL_ACTION),
    ],
    ids=["3p-quitter", "4p-slow", "4p-illegal"],
)
def test_the_others_play_on(names: list[str], faulty_seat: int, reason: Reason) -> None:
    result, _ = play(names, FAST, seed=99, env={"FAULT_AT": "10"})
    n = len(names)

    assert result.termination in ("normal", "round-cap")
    assert [f.seat for f in result.forfeits] == [faulty_seat]
    bad = result.seats[faulty_seat]
    assert bad.termination == str(reason)
    assert bad.placing == n  # the offender places last, below every other seat
    assert bad.decisions == 9
    others = [s for s in result.seats if s.seat != faulty_seat]
    for s in others:
        assert s.termination == result.termination
        assert s.placing < n
        assert s.decisions > bad.decisions  # they played on
    assert [s.placing for s in others] == competition_placings(s.score for s in others)

    check_forfeit_record(result, faulty_seat, reason)
    rep = replay(result.replay)
    assert rep.final.is_over
    # after the forfeit the referee decided for the seat ("auto"), and only for it
    auto = [e for e in rep.events if e.get("auto")]
    assert auto and all(e["seat"] == faulty_seat for e in auto)
    if reason is Reason.CRASHED:
        assert "leaving the pool" in result.forfeits[0].evidence["stderr_tail"]


def test_the_bank_absorbs_a_slow_decision() -> None:
    """0.8 s on one decision with 0.5 s per move: 0.3 s come out of the 2 s bank, no forfeit."""
    control = TimeControl(move_time=0.5, bank=2.0)
    result, _ = play(["greedy", "slow_bot.py"], control, seed=5, env={"FAULT_AT": "5", "SLEEP": "0.8"})
    assert result.forfeits == ()
    assert result.termination in ("normal", "round-cap")
    slow = result.seats[1]
    assert 0.8 <= slow.think_max < 2.5
    times = [e["ms"] for e in replay(result.replay).events if e.get("seat") == 1 and "ms" in e]
    assert len(times) == slow.decisions
    assert times[4] >= 800 and max(times) == times[4]  # the fifth decision was the slow one


@pytest.mark.parametrize("faulty_seat", [0, 1])
def test_stale_answers_are_dropped(faulty_seat: int) -> None:
    names = ["greedy", "greedy"]
    names[faulty_seat] = "stale_bot.py"
    result, _ = play(names, FAST, seed=7)
    assert result.forfeits == ()
    assert result.termination in ("normal", "round-cap")
    assert all(s.termination == result.termination for s in result.seats)
    assert result.seats[faulty_seat].decisions > 12
    line = replay_result(result)
    assert "forfeits" not in line


def test_impostor_is_refused_and_plays_on(tmp_path: Path) -> None:
    async def main() -> tuple[MatchResult, list[BotProcess], list[int | None]]:
        server = RefereeServer()
        address = await server.start(f"unix:{tmp_path / 'referee.sock'}")
        sessions = [server.session("greedy"), server.session("impostor")]
        procs = [
            BotProcess("greedy", tuple(resolve_bot("greedy").command), log_dir=tmp_path),
            BotProcess(
                "impostor",
                launch_command(FAULTY / "impostor_bot.py"),
                log_dir=tmp_path,
                extra_env={"ARENA_PEER_TOKEN": sessions[0].token},
            ),
        ]
        codes: list[int | None] = []
        try:
            for seat, (proc, session) in enumerate(zip(procs, sessions, strict=True)):
                await proc.start(address, session.token, log_stem=f"seat{seat}-{proc.name}")
            result = await server.play(
                sessions,
                31,
                FAST,
                probe=lambda seat: process_forfeit(procs[seat].probe()),
                evidence=lambda seat: procs[seat].evidence(),
            )
        finally:
            for proc in procs:
                codes.append(await proc.stop(grace=5.0))
            await server.stop(0.2)
        return result, procs, codes

    result, procs, codes = asyncio.run(main())
    assert_reaped(p.pid for p in procs if p.pid is not None)
    assert codes == [0, 0]  # both finished by themselves
    assert result.forfeits == ()
    assert result.termination in ("normal", "round-cap")
    assert all(s.termination == result.termination for s in result.seats)
    assert result.seats[1].decisions > 12
    replay_result(result)

    assert procs[1].stderr_path is not None
    log = procs[1].stderr_path.read_text()
    assert "impostor: peer-token: PERMISSION_DENIED" in log, log
    assert "impostor: made-up-token: UNAUTHENTICATED" in log, log
    assert "got a message" not in log
