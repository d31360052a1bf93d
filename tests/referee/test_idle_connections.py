"""Connections opened and left lying are given back (arena/referee/hardening.py): a connection
that never finishes its handshake is dropped after ``handshake_timeout_ms``, one that carries no
stream is closed after ``idle_connection_ms`` (HTTP/2 GOAWAY), while a bot's Play stream keeps its
connection for the whole match however long the bot thinks.  Real referee, real sockets, real bot
processes; gRPC's defaults (no idle limit, a two-minute handshake) fail the first two tests."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sockkit import HTTP2_PREFACE, read_until_closed

from arena.matchrunner import play_local_match, resolve_bot
from arena.referee import RefereeConfig, TimeControl
from arena.referee.hardening import HANDSHAKE_TIMEOUT_MS, IDLE_CONNECTION_MS
from arena.referee.server import RefereeServer

ROOT = Path(__file__).resolve().parents[2]
SLOW = ROOT / "bots" / "faulty" / "slow_bot.py"
GOAWAY = 0x7


def frame_types(data: bytes) -> list[int]:
    """The HTTP/2 frame types in ``data`` (a server's bytes: frames from the first byte)."""
    out = []
    while len(data) >= 9:
        length = int.from_bytes(data[:3], "big")
        out.append(data[3])
        data = data[9 + length :]
    return out


def hold(port: int, preface: bool) -> tuple[float, bytes]:
    """Open a connection (send the HTTP/2 preface and an empty SETTINGS, or nothing) and read
    until the referee closes it: (seconds it stayed open, the bytes received)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        if preface:
            s.sendall(HTTP2_PREFACE)
        return read_until_closed(s)


async def probe(config: RefereeConfig, preface: bool) -> tuple[float, bytes]:
    server = RefereeServer(config)
    address = await server.start("127.0.0.1:0")
    try:
        port = int(address.rsplit(":", 1)[1])
        return await asyncio.get_running_loop().run_in_executor(None, hold, port, preface)
    finally:
        await server.stop(0)


def test_the_defaults_bound_idle_and_unfinished_connections() -> None:
    config = RefereeConfig()
    assert config.idle_connection_ms == IDLE_CONNECTION_MS <= 60_000
    assert config.handshake_timeout_ms == HANDSHAKE_TIMEOUT_MS <= 20_000


def test_a_connection_that_never_handshakes_is_dropped() -> None:
    config = RefereeConfig(handshake_timeout_ms=1000, idle_connection_ms=60_000)
    open_for, _ = asyncio.run(probe(config, preface=False))
    assert 0.8 <= open_for < 6.0, open_for


def test_a_connection_without_a_stream_is_closed_with_goaway() -> None:
    # keepalive far off: an unanswered PING would cut the connection too, for another reason
    config = RefereeConfig(idle_connection_ms=1000, keepalive_ms=60_000, keepalive_timeout_ms=60_000)
    open_for, data = asyncio.run(probe(config, preface=True))
    assert 0.8 <= open_for < 6.0, open_for
    assert GOAWAY in frame_types(data), frame_types(data)


def test_a_client_channel_reconnects_after_the_idle_close() -> None:
    """A gRPC client whose idle connection was closed simply reconnects on its next call."""

    async def run() -> list[int]:
        server = RefereeServer(RefereeConfig(idle_connection_ms=300))
        address = await server.start("127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                statuses = []
                for _ in range(2):
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
                    statuses.append(reply.status)
                    await asyncio.sleep(1.0)  # the connection is closed meanwhile
                return statuses
        finally:
            await server.stop(0)

    assert asyncio.run(run()) == [health_pb2.HealthCheckResponse.SERVING] * 2


def test_a_bot_thinking_longer_than_the_idle_limit_keeps_its_seat() -> None:
    """The Play stream keeps the connection busy: a bot that sleeps 1.2 s over one decision, with
    connections closed after 0.3 s idle, plays the match to its end."""
    config = RefereeConfig(idle_connection_ms=300)
    result = asyncio.run(
        play_local_match(
            [resolve_bot("greedy"), resolve_bot(str(SLOW))],
            5,
            TimeControl(move_time=3.0, bank=1.0),
            config=config,
            extra_env=[{}, {"FAULT_AT": "3", "SLEEP": "1.2"}],
        )
    )
    assert result.forfeits == (), result.forfeits
    assert result.termination in ("normal", "round-cap"), result.termination  # legal[0] may pass a lot
