"""Tokens, sessions and the transport: a real RefereeServer on 127.0.0.1:0, with the test itself
playing raw gRPC clients (grpc.aio, same event loop) or launching real bot processes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.engine import legal_actions, new_game
from arena.referee import MatchResult, Reason, RefereeConfig, RefereeServer, TimeControl
from arena.referee.faults import process_forfeit
from arena.referee.server import SERVICE
from arena.sandbox import BotProcess, launch_command
from arena.v1 import arena_pb2 as pb
from arena.wire import LOUNGER_NAMES, TRACK, state_from_pb

from .helpers import (
    TRIVIAL_BOT,
    Call,
    assert_reaped,
    expect_refused,
    is_alive,
    kinds,
    open_play,
    play_stream,
    replay_result,
)

CONTROL = TimeControl(move_time=5.0, bank=10.0)  # raw clients in the test's loop: never slow


@contextlib.asynccontextmanager
async def serving(
    config: RefereeConfig | None = None,
) -> AsyncIterator[tuple[RefereeServer, grpc.aio.Channel]]:
    """A started RefereeServer on a free TCP port and a channel to it."""
    server = RefereeServer(config)
    address = await server.start("127.0.0.1:0")
    assert address.startswith("127.0.0.1:") and not address.endswith(":0")
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            yield server, channel
    finally:
        await server.stop(0.2)


def run(main: Callable[[], Any]) -> Any:
    return asyncio.run(main())


async def next_message(call: Call, kind: str) -> pb.RefereeMessage:
    message = await asyncio.wait_for(call.read(), 10)
    assert isinstance(message, pb.RefereeMessage), message
    assert message.WhichOneof("message") == kind, message
    return message


# ---------------------------------------------------------------------- authentication


def test_missing_or_unknown_token_is_unauthenticated() -> None:
    async def main() -> list[grpc.StatusCode]:
        async with serving() as (server, channel):
            server.session("someone")  # a live session exists; its token is not presented
            return [
                await expect_refused(open_play(channel, None)),
                await expect_refused(open_play(channel, "")),
                await expect_refused(open_play(channel, "at_not-a-token-anyone-was-given")),
            ]

    assert run(main) == [grpc.StatusCode.UNAUTHENTICATED] * 3


def test_second_stream_on_a_token_is_denied_and_the_first_plays_on() -> None:
    async def main() -> tuple[MatchResult, list[list[pb.RefereeMessage]], grpc.StatusCode, grpc.StatusCode]:
        async with serving() as (server, channel):
            a, b = server.session("a"), server.session("b")
            match = asyncio.create_task(server.play([a, b], 5, CONTROL, match_id="auth-1"))
            call_a, call_b = open_play(channel, a.token), open_play(channel, b.token)
            seen_a = [await next_message(call_a, "welcome")]
            seen_b = [await next_message(call_b, "welcome")]
            assert (seen_a[0].welcome.seat, seen_b[0].welcome.seat) == (0, 1)  # the token decides
            seen_a.append(await next_message(call_a, "request"))  # the match is on
            # a's stream is open: a second stream with a's token is refused ...
            denied = await expect_refused(open_play(channel, a.token))
            # ... and a's own stream answers its pending request and plays to the end
            streams = await asyncio.gather(play_stream(call_a, seen_a), play_stream(call_b, seen_b))
            result = await asyncio.wait_for(match, 30)
            # the match is over: its one-match tokens are gone
            after = await expect_refused(open_play(channel, a.token))
            return result, list(streams), denied, after

    result, streams, denied, after = run(main)
    assert denied == grpc.StatusCode.PERMISSION_DENIED
    assert after == grpc.StatusCode.UNAUTHENTICATED
    assert result.forfeits == ()
    assert result.termination in ("normal", "round-cap")
    assert all(s.decisions > 12 for s in result.seats)
    replay_result(result)
    for seat, messages in enumerate(streams):
        assert kinds(messages) == ["welcome", "request", "result", "goodbye"]
        final = messages[-2].result
        assert final.match_id == "auth-1"
        assert [s.score for s in final.seats] == list(result.scores)
        assert final.seats[seat].termination == result.termination


def test_persistent_sessions_play_several_matches_then_goodbye() -> None:
    async def main() -> tuple[list[MatchResult], list[int], list[bool], list[int | None]]:
        async with serving() as (server, _):
            sessions = [server.session(f"trivial-{k}", persistent=True) for k in range(2)]
            procs = [BotProcess(s.name, launch_command(TRIVIAL_BOT)) for s in sessions]
            results: list[MatchResult] = []
            alive: list[bool] = []
            codes: list[int | None] = []
            try:
                for proc, session in zip(procs, sessions, strict=True):
                    await proc.start(server.address, session.token)
                pids = [p.pid for p in procs if p.pid is not None]
                for k in range(3):
                    seating = sessions if k % 2 == 0 else sessions[::-1]
                    results.append(await server.play(seating, 100 + k, CONTROL, match_id=f"persist-{k}"))
                    alive.append(all(p.probe() is None and is_alive(p.pid or -1) for p in procs))
                    assert [p.pid for p in procs] == pids
                for session in sessions:
                    server.revoke(session)
                for proc in procs:  # they must leave by themselves, with status 0
                    assert proc.proc is not None
                    codes.append(await asyncio.wait_for(proc.proc.wait(), 15))
            finally:
                for proc in procs:
                    await proc.stop(grace=0.5)
            return results, pids, alive, codes

    results, pids, alive, codes = run(main)
    assert_reaped(pids)
    assert alive == [True, True, True]  # the same two processes played all three matches
    assert codes == [0, 0]
    for k, result in enumerate(results):
        assert result.forfeits == ()
        assert result.termination in ("normal", "round-cap")
        names = [s.name for s in result.seats]
        assert names == (["trivial-0", "trivial-1"] if k % 2 == 0 else ["trivial-1", "trivial-0"])
        assert all(s.decisions > 0 for s in result.seats)
        replay_result(result)


def test_health_service_reports_serving() -> None:
    async def main() -> tuple[int, int, grpc.StatusCode | None]:
        async with serving() as (_, channel):
            stub: Any = health_pb2_grpc.HealthStub(channel)  # the stubs' types lack Check
            referee = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE))
            overall = await stub.Check(health_pb2.HealthCheckRequest(service=""))
            unknown = None
            try:
                await stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
            except grpc.aio.AioRpcError as exc:
                unknown = exc.code()
            return referee.status, overall.status, unknown

    referee, overall, unknown = run(main)
    assert SERVICE == "arena.v1.Referee"
    assert referee == health_pb2.HealthCheckResponse.SERVING
    assert overall == health_pb2.HealthCheckResponse.SERVING
    assert unknown == grpc.StatusCode.NOT_FOUND


# ---------------------------------------------------------------------- forfeits at the transport


def test_no_show() -> None:
    async def main() -> tuple[MatchResult, float, int | None, int]:
        async with serving(RefereeConfig(connect_timeout=1)) as (server, _):
            present, absent = server.session("present"), server.session("absent")
            proc = BotProcess("present", launch_command(TRIVIAL_BOT))
            try:
                await proc.start(server.address, present.token)
                deadline = time.monotonic() + 30  # a loaded machine may take over the 1 s to start it
                while not present.stream_open and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                start = time.monotonic()
                result = await server.play(
                    [absent, present],
                    8,
                    CONTROL,
                    probe=lambda seat: process_forfeit(proc.probe()) if seat else None,
                )
                elapsed = time.monotonic() - start
                assert proc.proc is not None
                code = await asyncio.wait_for(proc.proc.wait(), 15)  # told goodbye: leaves by itself
            finally:
                await proc.stop(grace=0.5)
            assert proc.pid is not None
            return result, elapsed, code, proc.pid

    result, elapsed, code, pid = run(main)
    assert_reaped([pid])
    assert code == 0
    assert 1.0 <= elapsed < 10.0
    absent, present = result.seats
    assert absent.termination == str(Reason.NO_SHOW)
    assert absent.placing == 2 and absent.decisions == 0
    assert "did not connect within 1s" in absent.detail
    assert present.termination == "forfeit" and present.placing == 1
    assert result.termination == "forfeit"
    [forfeit] = result.forfeits
    assert (forfeit.seat, forfeit.reason, forfeit.at_event) == (0, Reason.NO_SHOW, 0)
    line = replay_result(result)
    assert line["forfeits"][0]["reason"] == "no-show"


def test_nobody_shows_up() -> None:
    async def main() -> MatchResult:
        async with serving(RefereeConfig(connect_timeout=1)) as (server, _):
            sessions = [server.session("x"), server.session("y"), server.session("z")]
            return await asyncio.wait_for(server.play(sessions, 9, CONTROL), 15)

    result = run(main)
    assert [s.termination for s in result.seats] == ["no-show"] * 3
    assert result.termination == "forfeit"
    assert [f.seat for f in result.forfeits] == [0, 1, 2]
    replay_result(result)


GARBAGE = object()  # the raw client's marker for "send invalid bytes"


def _serialize(message: object) -> bytes:
    if message is GARBAGE:
        return b"\xff\xff\xff"  # not a protobuf message at all
    if isinstance(message, bytes):
        return message
    assert isinstance(message, pb.BotMessage)
    return message.SerializeToString()


async def misbehaving_match(
    server: RefereeServer, channel: grpc.aio.Channel, bad: object, seed: int
) -> tuple[MatchResult, list[pb.RefereeMessage], list[pb.RefereeMessage]]:
    """Seat 0 sends ``bad`` instead of its first answer; seat 1 plays well.  Returns the result
    and both seats' messages."""
    s0, s1 = server.session("bad"), server.session("good")
    match = asyncio.create_task(server.play([s0, s1], seed, CONTROL))
    call0 = open_play(channel, s0.token, serializer=_serialize)
    call1 = open_play(channel, s1.token, serializer=_serialize)
    good = asyncio.create_task(play_stream(call1))
    seen0 = [await next_message(call0, "welcome"), await next_message(call0, "request")]
    await call0.write(bad)
    with contextlib.suppress(grpc.aio.AioRpcError):
        while (message := await call0.read()) is not grpc.aio.EOF:
            assert isinstance(message, pb.RefereeMessage)
            seen0.append(message)
    result = await asyncio.wait_for(match, 30)
    seen1 = await asyncio.wait_for(good, 30)
    return result, seen0, seen1


def test_invalid_protobuf_bytes_are_malformed() -> None:
    async def main() -> tuple[MatchResult, list[pb.RefereeMessage], list[pb.RefereeMessage]]:
        async with serving() as (server, channel):
            return await misbehaving_match(server, channel, GARBAGE, 21)

    result, seen0, seen1 = run(main)
    bad, good = result.seats
    assert bad.termination == "malformed-action"
    assert "not a BotMessage" in bad.detail
    assert bad.placing == 2 and good.placing == 1 and good.termination == "forfeit"
    [forfeit] = result.forfeits
    assert forfeit.evidence["last_message"] == "<3 bytes>"
    assert "time_used_ms" in forfeit.evidence
    line = replay_result(result)
    assert line["forfeits"][0]["reason"] == "malformed-action"
    # the offender is told why, in its own MatchResult
    assert kinds(seen0) == ["welcome", "request", "result", "goodbye"]
    assert seen0[2].result.seats[0].termination == "malformed-action"
    assert kinds(seen1)[-2:] == ["result", "goodbye"]


def test_oversized_message_and_the_server_keeps_serving() -> None:
    big = pb.BotMessage(action=pb.ActionReply(request_id=1, action="x" * 200_000))
    assert big.ByteSize() > 64 * 1024

    async def main() -> tuple[MatchResult, MatchResult, list[pb.RefereeMessage]]:
        async with serving() as (server, channel):
            result, _, seen1 = await misbehaving_match(server, channel, big, 22)
            # the same server, the same channel: another match plays normally
            a, b = server.session("a"), server.session("b")
            match = asyncio.create_task(server.play([a, b], 23, CONTROL))
            await asyncio.wait_for(
                asyncio.gather(
                    play_stream(open_play(channel, a.token)), play_stream(open_play(channel, b.token))
                ),
                60,
            )
            return result, await asyncio.wait_for(match, 10), seen1

    result, after, seen1 = run(main)
    bad, good = result.seats
    assert bad.termination in ("malformed-action", "disconnected"), bad.detail
    assert bad.placing == 2 and good.placing == 1 and good.termination == "forfeit"
    assert [f.seat for f in result.forfeits] == [0]
    replay_result(result)
    assert kinds(seen1)[-2:] == ["result", "goodbye"]

    assert after.forfeits == ()
    assert after.termination in ("normal", "round-cap")
    replay_result(after)


def test_revoked_persistent_session_gets_goodbye_not_refusal() -> None:
    """A persistent bot is told goodbye whether it is waiting on a stream when its session is
    revoked or reconnects just after (between two matches); only later streams are refused."""

    async def main() -> dict[str, Any]:
        async with serving() as (server, channel):
            a, b = server.session("a", persistent=True), server.session("b", persistent=True)
            match = asyncio.create_task(server.play([a, b], 3, CONTROL))
            first = await asyncio.gather(
                play_stream(open_play(channel, a.token)), play_stream(open_play(channel, b.token))
            )
            result = await asyncio.wait_for(match, 30)
            # a waits for its next match on an open stream; b has no stream open
            waiting = open_play(channel, a.token)
            for _ in range(200):
                if a.stream_open:
                    break
                await asyncio.sleep(0.01)
            assert a.stream_open and not b.stream_open
            server.revoke(a)
            server.revoke(b)
            return {
                "result": result,
                "first": first,
                "a": await play_stream(waiting),
                "b": await play_stream(open_play(channel, b.token)),
                "a again": await expect_refused(open_play(channel, a.token)),
                "b again": await expect_refused(open_play(channel, b.token)),
            }

    out = run(main)
    assert out["result"].forfeits == ()
    for messages in out["first"]:
        assert kinds(messages) == ["welcome", "request", "result"]  # persistent: no goodbye yet
    for key in ("a", "b"):
        assert kinds(out[key]) == ["goodbye"], out[key]
        assert out[key][0].goodbye.reason == "no further matches for this token"
    assert out["a again"] == out["b again"] == grpc.StatusCode.UNAUTHENTICATED


def test_welcome_and_requests_describe_the_match() -> None:
    """Welcome and DecisionRequest carry what the protocol promises (unlimited time here)."""

    async def main() -> tuple[MatchResult, list[list[pb.RefereeMessage]]]:
        async with serving() as (server, channel):
            sessions = [server.session(name) for name in ("north", "east", "south")]
            match = asyncio.create_task(
                server.play(sessions, 17, TimeControl(unlimited=True), match_id="describe")
            )
            streams = await asyncio.gather(*(play_stream(open_play(channel, s.token)) for s in sessions))
            return await asyncio.wait_for(match, 30), list(streams)

    result, streams = run(main)
    assert result.forfeits == () and result.termination in ("normal", "round-cap")
    request_ids: list[int] = []
    for seat, messages in enumerate(streams):
        welcome = messages[0].welcome
        assert (welcome.match_id, welcome.seat, welcome.players) == ("describe", seat, 3)
        assert (welcome.rules_version, welcome.protocol) == ("1", "arena.v1")
        assert welcome.time_control.unlimited
        assert (welcome.time_control.move_time_ms, welcome.time_control.bank_ms) == (0, 0)
        assert list(welcome.lounger_names) == list(LOUNGER_NAMES) and len(LOUNGER_NAMES) == 26
        assert list(welcome.track) == list(TRACK) and welcome.track[0] == "diving-board"
        assert len(welcome.track) == 12
        assert list(welcome.seating) == ["north", "east", "south"]
        requests = [m.request for m in messages if m.HasField("request")]
        assert len(requests) == result.seats[seat].decisions
        for request in requests:
            assert request.state.seat == seat
            assert (request.move_time_ms, request.bank_ms) == (0, 0)
            engine_legal = [str(a) for a in legal_actions(state_from_pb(request.state))]
            assert list(request.legal_actions) == engine_legal
        request_ids += [r.request_id for r in requests]
        # the first request of seat 0 is the first setup placement, with nothing before it
        if seat == 0:
            assert requests[0].state.phase == pb.PHASE_SETUP
            assert list(requests[0].legal_actions) == [str(a) for a in legal_actions(new_game(3))]
            assert len(requests[0].events) == 0
        else:  # later seats hear about the placements made before their first request
            events = requests[0].events
            assert [e.action.seat for e in events] == list(range(seat))
    assert sorted(request_ids) == list(range(1, len(request_ids) + 1))  # unique, increasing ids
