"""The bridge against a real referee over real gRPC: a person's seat plays whole matches, every bad
post is refused without sending anything (and never costs the seat the match), the page's presence
and the reconnect grace decide a ``disconnected`` forfeit, and the record is a bot match's."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from arena.engine import replay
from arena.humanseat.bridge import HumanBridge, PostError
from arena.humanseat.session import PlaySession, PlaySpec
from arena.humanseat.store import HumanNameError, human_name
from arena.matchrunner import resolve_bot
from arena.referee import MatchResult, TimeControl
from arena.store.db import Database
from arena.web.replays import replay_text, verify_match


def spec(bots: list[str], seat: int = 0, *, grace: float = 30.0, open_wait: float = 30.0) -> PlaySpec:
    """A match of the person ``tester`` in ``seat`` against ``bots`` (unsandboxed), seed 5."""
    return PlaySpec(
        tuple(resolve_bot(b) for b in bots),
        seat,
        "tester",
        TimeControl(20.0, 0.0),
        5,
        grace=grace,
        open_wait=open_wait,
    )


def choose(bridge: HumanBridge, rng: random.Random) -> str:
    pending = bridge.pending
    assert pending is not None
    return rng.choice(pending.legal)


async def drive(
    session: PlaySession,
    *,
    each: Callable[[HumanBridge, int], Awaitable[None]] | None = None,
    rng: random.Random | None = None,
    present: bool = True,
) -> MatchResult | None:
    """Run the session and answer every request with a random legal action (``each`` runs
    before every answer); the page counts as open throughout when ``present``."""
    rng = rng or random.Random(1)
    task = asyncio.create_task(session.run())
    await session.ready.wait()
    bridge = session.bridge
    assert bridge is not None
    if present:
        bridge.page_opened()
    n = 0
    while not bridge.ended.is_set():
        version = bridge.version
        if bridge.pending is not None:
            n += 1
            if each is not None:
                await each(bridge, n - 1)  # (it may answer the request itself)
            if bridge.pending is not None:
                await bridge.submit(bridge.key, bridge.seat, bridge.pending.request_id, choose(bridge, rng))
            continue
        await bridge.changed(version, 1.0)
    return await task


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(f"sqlite:///{tmp_path / 'arena.db'}")


def versions_of(db: Database, bots: list[str]) -> list[int]:
    from arena.botref import resolve, stored_version

    return [v for v in (stored_version(db, resolve(b, db)).id for b in bots) if v is not None]


@pytest.mark.parametrize("players", [2, 4])
def test_a_whole_match_over_grpc_is_stored_and_verifies(db: Database, players: int) -> None:
    bots = ["random", "greedy", "random"][: players - 1]
    seat = players - 1
    session = PlaySession(spec(bots, seat), db=db, version_ids=versions_of(db, bots))
    result = asyncio.run(drive(session))
    assert result is not None and not result.forfeits, result
    assert session.stored is not None
    verdict = verify_match(db, session.stored)
    assert verdict.ok, verdict.message()
    rep = replay(replay_text(db, session.stored))
    assert rep.header["seating"][seat] == "human:tester"
    # the page saw exactly the engine's states of the record, event by event
    bridge = session.bridge
    assert bridge is not None and bridge.timeline is not None
    assert bridge.timeline.states == list(rep.states)
    assert bridge.final is not None and bridge.final["stored"] == session.stored
    assert result.seats[seat].decisions > 20
    # a person is no bot: 'arena bots list' (both of its paths) does not list human:tester
    from arena.store.bots import list_bots
    from arena.store.quickread import bot_rows_fast

    assert "human:tester" not in [b.bot.name for b in list_bots(db)]
    assert set(bots) <= {b.bot.name for b in list_bots(db)}
    fast = bot_rows_fast(url=db.url)
    assert fast is not None and [r.name for r in fast] == sorted({b.bot.name for b in list_bots(db)})


def test_bad_posts_are_refused_and_never_cost_the_match(db: Database) -> None:
    refused: dict[str, int] = {}

    async def misbehave(bridge: HumanBridge, n: int) -> None:
        pending = bridge.pending
        assert pending is not None
        rid = pending.request_id

        async def refuse(key: str, seat: int, request_id: int, action: str) -> None:
            with pytest.raises(PostError) as info:
                await bridge.submit(key, seat, request_id, action)
            refused[info.value.code] = info.value.status

        if n == 0:
            await refuse("forged", bridge.seat, rid, pending.legal[0])  # a forged post
            await refuse("", bridge.seat, rid, pending.legal[0])
            await refuse(bridge.key, bridge.seat + 1, rid, pending.legal[0])  # for another seat
            await refuse(bridge.key, bridge.seat, rid + 1000, pending.legal[0])  # an id never sent
            await refuse(bridge.key, bridge.seat, rid, "place nowhere")  # not an action
            await refuse(bridge.key, bridge.seat, rid, "pass")  # not legal now (setup)
        elif n == 1:
            # a double click: the same answer twice at once; one goes, one is refused
            outcomes = await asyncio.gather(
                bridge.submit(bridge.key, bridge.seat, rid, pending.legal[0]),
                bridge.submit(bridge.key, bridge.seat, rid, pending.legal[0]),
                return_exceptions=True,
            )
            errors = [o for o in outcomes if isinstance(o, PostError)]
            assert len(errors) == 1 and errors[0].status == 409, outcomes
            refused["double"] = errors[0].status
        elif n == 2:
            # a replayed post of an older, answered request
            old = min(bridge.answered)
            await refuse(bridge.key, bridge.seat, old, "stop")

    session = PlaySession(spec(["random"]), db=db, version_ids=versions_of(db, ["random"]))
    result = asyncio.run(drive(session, each=misbehave))
    assert refused == {
        "bad-key": 403,
        "wrong-seat": 403,
        "unknown-request": 409,
        "not-legal": 422,
        "double": 409,
        "already-answered": 409,
    }
    assert result is not None and not result.forfeits, result.forfeits if result else session.error
    assert session.stored is not None and verify_match(db, session.stored).ok
    with pytest.raises(PostError) as over:  # after the match: nothing is due
        asyncio.run(session.bridge.submit(session.key, 0, 10**6, "stop"))  # type: ignore[union-attr]
    assert over.value.status == 409


def test_a_page_back_within_the_grace_keeps_the_seat() -> None:
    async def step_away(bridge: HumanBridge, n: int) -> None:
        if n == 5:
            bridge.page_closed()
            await asyncio.sleep(0.8)  # shorter than the grace
            assert bridge.away_for() > 0.5
            bridge.page_opened()

    session = PlaySession(spec(["random"], grace=1.5))
    result = asyncio.run(drive(session, each=step_away))
    assert result is not None and not result.forfeits, result


def test_after_the_grace_the_seat_forfeits_disconnected(db: Database) -> None:
    async def leave(bridge: HumanBridge, n: int) -> None:
        if n == 5:
            left = time.monotonic()
            bridge.page_closed()
            await asyncio.wait_for(bridge.ended.wait(), 15)
            assert time.monotonic() - left >= 1.0  # not before the grace
            assert bridge.left.startswith("the page was closed for over 1 s")

    bots = ["random", "greedy", "random"]
    session = PlaySession(spec(bots, grace=1.0), db=db, version_ids=versions_of(db, bots))
    result = asyncio.run(drive(session, each=leave))
    assert result is not None
    assert [(f.seat, str(f.reason)) for f in result.forfeits] == [(0, "disconnected")]
    assert session.stored is not None and verify_match(db, session.stored).ok
    rep = replay(replay_text(db, session.stored))
    assert [f["reason"] for f in rep.result["forfeits"]] == ["disconnected"]
    assert session.bridge is not None and session.bridge.result is not None
    assert session.bridge.result["seats"][0]["termination"] == "disconnected"
    # the others played on to the end (4 players: the forfeited seat's turns pass automatically)
    assert str(result.termination) in ("normal", "round-cap")


def test_a_page_never_opened_forfeits_after_the_open_wait() -> None:
    session = PlaySession(spec(["random"], open_wait=1.0))
    started = time.monotonic()
    result = asyncio.run(session.run())  # nobody opens the page, nobody answers
    assert result is not None
    assert [(f.seat, str(f.reason)) for f in result.forfeits] == [(0, "disconnected")]
    # the detail says why (it spoke of keepalive pings and Node.js event loops: an outside review)
    assert result.forfeits[0].detail == "the page was not opened within 1 s; the stream ended"
    assert time.monotonic() - started < 15


def test_a_bad_player_name_is_refused() -> None:
    assert human_name("alice") == "human:alice"
    with pytest.raises(HumanNameError, match="bad player name"):
        human_name("a b")
    with pytest.raises(ValueError, match="seat 2 does not exist"):
        PlaySpec((resolve_bot("random"),), 2, "x", TimeControl(), 1)


def test_unlimited_time_has_no_clock_and_the_referee_waits() -> None:
    base = spec(["random"])
    unlimited = PlaySpec(base.bots, 0, "tester", TimeControl(unlimited=True), 9)
    seen: list[object] = []

    async def slow_first(bridge: HumanBridge, n: int) -> None:
        if n == 0:
            snap = bridge.snapshot()
            seen.extend([snap["request"]["left_ms"], bridge.time_control])
            await asyncio.sleep(1.5)  # longer than nothing: no deadline

    session = PlaySession(unlimited)
    result = asyncio.run(drive(session, each=slow_first))
    assert seen == [None, "no time limit"]
    assert result is not None and not result.forfeits
    assert replay(result.replay).header["time_control"] == "unlimited"


def test_the_page_never_gets_a_crashed_bots_stderr(tmp_path: Path) -> None:
    """The person at a web game is not the bot's owner: the end of the game the page gets carries
    the crash cut before the line the bot printed, and no stderr tail (an outside review read a
    bot's whole 4 KiB stderr tail, a secret in it, from ``final``)."""
    import json

    leaky = tmp_path / "leaky_bot.py"
    leaky.write_text(
        "import sys\nsys.stderr.write('RuntimeError: SECRET-OF-ALICE api_key=sk-1\\n')\nsys.exit(1)\n"
    )
    session = PlaySession(spec([str(leaky)], seat=0, open_wait=5.0))
    result = asyncio.run(session.run())
    assert result is not None and result.forfeits and "SECRET-OF-ALICE" in result.forfeits[0].detail
    assert session.bridge is not None and session.bridge.final is not None
    final = json.dumps(session.bridge.final)
    assert "SECRET-OF-ALICE" not in final and "stderr_tail" not in final, final
    crashed = [s for s in session.bridge.final["seats"] if s["termination"] == "crashed"]
    assert crashed and crashed[0]["detail"].endswith("(the bot's last stderr line is shown to its owner)")
    assert "SECRET-OF-ALICE" not in json.dumps(session.bridge.snapshot())
