"""Item 10: a message over the transport limit is a malformed-action forfeit.

gRPC refuses such a message before the referee's code sees it (the bot gets RESOURCE_EXHAUSTED);
the referee used to take the end of the stream for a disconnection (or, with a real process,
a crash or a timeout).  Real RefereeServer, real gRPC over a real TCP socket, real bytes: just
over the transport limit, and 200 MB."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from arena.engine import replay
from arena.referee import MatchResult, Reason, RefereeConfig, RefereeServer, TimeControl
from arena.v1 import arena_pb2 as pb

from .links import greedy_reply

CONTROL = TimeControl(move_time=10.0, bank=10.0)  # far longer than the test: no timeout can hide it
LIMIT = RefereeConfig().transport_max_bytes


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def huge_answer(request_id: int, size: int) -> bytes:
    """BotMessage{action{request_id, action: <size zero bytes>}}, encoded without copies of the text."""
    head = b"\x08" + _varint(request_id) + b"\x12" + _varint(size)
    return b"\x12" + _varint(len(head) + size) + head + bytes(size)


async def _client(channel: grpc.aio.Channel, token: str, size: int | None, log: list[str]) -> None:
    call = channel.stream_stream(
        "/arena.v1.Referee/Play",
        request_serializer=lambda raw: raw,
        response_deserializer=pb.RefereeMessage.FromString,
    )(metadata=(("arena-token", token),))
    try:
        async for message in call:
            if message.HasField("request"):
                if size is not None:
                    await call.write(huge_answer(message.request.request_id, size))
                    size = None
                else:
                    await call.write(greedy_reply(message.request).SerializeToString())
    except grpc.aio.AioRpcError as exc:
        log.append(f"{exc.code().name}: {exc.details()}")
    finally:
        call.cancel()


def play_with_oversize(size: int) -> tuple[MatchResult, list[str], float]:
    """Seat 1 answers its first request with a ``size``-byte message; seat 0 plays greedy."""

    async def main() -> tuple[MatchResult, list[str], float]:
        server = RefereeServer()
        address = await server.start("127.0.0.1:0")
        log: list[str] = []
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                sessions = [server.session("greedy"), server.session("oversize")]
                clients = [
                    asyncio.create_task(_client(channel, sessions[0].token, None, [])),
                    asyncio.create_task(_client(channel, sessions[1].token, size, log)),
                ]
                start = time.monotonic()
                result = await asyncio.wait_for(server.play(sessions, 7, CONTROL), 60)
                elapsed = time.monotonic() - start
                await asyncio.wait_for(asyncio.gather(*clients, return_exceptions=True), 30)
        finally:
            await server.stop(0.2)
        return result, log, elapsed

    return asyncio.run(main())


@pytest.mark.parametrize("size", [LIMIT + 1, 200_000_000], ids=["just-over-the-limit", "200MB"])
def test_message_over_the_transport_limit_is_malformed(size: int) -> None:
    result, log, elapsed = play_with_oversize(size)
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1
    assert forfeit.reason is Reason.MALFORMED_ACTION, forfeit
    assert "transport refused" in forfeit.detail and f"{LIMIT}-byte" in forfeit.detail, forfeit.detail
    assert result.seats[0].termination == "forfeit" and result.seats[0].placing == 1
    assert elapsed < 8.0  # at once, not at a deadline (10 s per move)
    assert any("RESOURCE_EXHAUSTED" in line for line in log), log  # what the bot was told
    assert replay(result.replay).result["forfeits"][0]["reason"] == "malformed-action"


def test_message_under_the_transport_limit_is_measured_exactly() -> None:
    """Between the referee's 64 KiB and the transport's limit the size is known and reported."""
    result, _, _ = play_with_oversize(1_000_000)
    (forfeit,) = result.forfeits
    assert forfeit.reason is Reason.MALFORMED_ACTION
    assert "over the 65536-byte limit" in forfeit.detail
    assert forfeit.evidence["last_message"].startswith("<1000")
