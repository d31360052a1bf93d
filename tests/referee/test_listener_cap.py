"""A flood of connections on the remote-bot listener cannot take the process's open files
(arena/referee/hardening.py, ``RefereeConfig.listen_connections``): the listener is a gRPC server
of its own that holds at most that many connections, one more is closed as soon as it is
accepted, and the local address keeps serving -- a whole match is played there during the flood.
Real referee, real sockets, a real bot process.  Before the cap (one shared server), 300 held
connections cost the process 300 open files and a flood up to its limit stopped everything."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sockkit import HTTP2_PREFACE

from arena.hosting import LocalSeat, MatchHost
from arena.matchrunner import resolve_bot
from arena.referee import RefereeConfig, TimeControl
from arena.referee.hardening import LISTEN_CONNECTIONS, listen_cap
from arena.referee.server import RefereeServer

SAMPLE = Path(__file__).resolve().parents[2] / "bots" / "random_bot.py"
CAP = 8
FLOOD = 300


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@contextmanager
def flood(address: str, n: int) -> Iterator[list[socket.socket]]:
    """``n`` connections to ``address`` (host:port), each having sent the HTTP/2 preface."""
    host, port = address.rsplit(":", 1)
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.create_connection((host, int(port)))
            s.sendall(HTTP2_PREFACE)
            socks.append(s)
        yield socks
    finally:
        for s in socks:
            s.close()


async def check(address: str) -> grpc.StatusCode | int:
    """A health Check over a fresh channel: the serving status, or the gRPC error code."""
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=3)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
        return int(reply.status)


async def server_files_during_flood(server: RefereeServer) -> int:
    """Open files the server process gained from a flood of :data:`FLOOD` connections (the
    flood's own client sockets, in this same process, not counted)."""
    before = open_files()
    loop = asyncio.get_running_loop()
    with flood(server.listen_address, FLOOD):
        await asyncio.sleep(1.0)  # let gRPC accept (and close) what it will
        return await loop.run_in_executor(None, open_files) - before - FLOOD


def test_the_default_cap_is_finite() -> None:
    assert 0 < RefereeConfig().listen_connections == LISTEN_CONNECTIONS <= 4096


def test_a_flood_on_the_listener_costs_at_most_the_cap_in_open_files() -> None:
    async def run() -> tuple[int, object, object, object]:
        server = RefereeServer(RefereeConfig(listen_connections=CAP))
        local = await server.start("127.0.0.1:0", listen="127.0.0.1:0")
        try:
            gained = await server_files_during_flood(server)
            with flood(server.listen_address, FLOOD):
                await asyncio.sleep(1.0)
                local_status = await check(local)
                remote_status = await check(server.listen_address)
            await asyncio.sleep(0.5)
            after = await check(server.listen_address)
            return gained, local_status, remote_status, after
        finally:
            await server.stop(0)

    gained, local_status, remote_status, after = asyncio.run(run())
    assert gained <= CAP + 4, gained  # was FLOOD (300) with one shared server
    serving = int(health_pb2.HealthCheckResponse.SERVING)
    assert local_status == serving  # the local bots' address is not affected
    assert remote_status == grpc.StatusCode.UNAVAILABLE  # the listener is full while the flood lasts
    assert after == serving  # and serves again once it is over


def test_a_local_match_plays_to_its_end_while_the_listener_is_flooded() -> None:
    async def run() -> tuple[tuple[object, ...], str]:
        host = MatchHost(sandbox=None, config=RefereeConfig(listen_connections=CAP))
        await host.start(listen="127.0.0.1:0")
        try:
            with flood(host.server.listen_address, FLOOD):
                await asyncio.sleep(0.5)
                result = await host.play(
                    [LocalSeat(resolve_bot("greedy")), LocalSeat(resolve_bot("random"))],
                    11,
                    TimeControl(move_time=2.0, bank=5.0),
                )
        finally:
            await host.close()
        return result.forfeits, result.termination

    forfeits, termination = asyncio.run(run())
    assert forfeits == ()
    assert termination in ("normal", "round-cap")


def test_a_remote_bot_turned_away_by_a_full_listener_is_told_what_to_do() -> None:
    """The SDK's sample bot against a full listener: exit 2, one line that says the listener may
    be full and to try again (not only gRPC's 'failed to connect to all addresses').  Its first
    connection is not tried again (``--connect-wait=0``): by default the SDK keeps trying for
    10 s, and gets in once the flood's connections expire."""

    async def run() -> tuple[int | None, str]:
        server = RefereeServer(RefereeConfig(listen_connections=CAP))
        await server.start("127.0.0.1:0", listen="127.0.0.1:0")
        try:
            token = server.session("remote").token
            with flood(server.listen_address, FLOOD):
                await asyncio.sleep(0.5)
                bot = await asyncio.create_subprocess_exec(
                    sys.executable, str(SAMPLE), f"--address={server.listen_address}", "--connect-wait=0",
                    env={**os.environ, "ARENA_TOKEN": token},
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                )  # fmt: skip
                out, _ = await asyncio.wait_for(bot.communicate(), 60)
            return bot.returncode, out.decode()
        finally:
            await server.stop(0)

    code, out = asyncio.run(run())
    assert code == 2, out
    assert "UNAVAILABLE" in out and "closes new ones until some end: try again shortly" in out, out


LOW_LIMIT_PROBE = """
import asyncio, os, sys
from arena.referee.server import RefereeServer

async def main():
    server = RefereeServer()  # the default cap (1,024), in a process that may open 1,024 files
    await server.start("127.0.0.1:0", listen="127.0.0.1:0")
    print(server.listen_connections, server.listen_address, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)  # the flood is on
    files = len(os.listdir("/proc/self/fd"))
    spare = []
    try:
        spare = [open(os.devnull) for _ in range(100)]  # the rest of the process can open files
    except OSError:
        pass
    print(files, len(spare), flush=True)
    for f in spare:
        f.close()
    await server.stop(0)

asyncio.run(main())
"""


def test_a_low_open_files_limit_lowers_the_cap_and_the_process_keeps_files() -> None:
    """Under a hard limit of 1,024 open files (``prlimit``), the default cap of 1,024 would let a
    flood take every file (an outside review: the web app stopped answering); the cap is lowered to
    fit, the server says so, and the process can still open files during a flood of 1,100."""
    assert listen_cap(LISTEN_CONNECTIONS, 1 << 20) == LISTEN_CONNECTIONS
    assert listen_cap(LISTEN_CONNECTIONS, 1024) == 256
    assert listen_cap(5, 100) == 1
    probe = subprocess.Popen(
        ["prlimit", "--nofile=1024:1024", sys.executable, "-c", LOW_LIMIT_PROBE],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert probe.stdout is not None and probe.stdin is not None
        cap_text, address = probe.stdout.readline().split()
        with flood(address, 1100):
            time.sleep(1.0)
            probe.stdin.write("go\n")
            probe.stdin.flush()
            files, spare = (int(x) for x in probe.stdout.readline().split())
        _, err = probe.communicate(timeout=60)
    finally:
        if probe.poll() is None:
            probe.kill()
    assert int(cap_text) == 256
    assert files <= 256 + 100, files  # the listener's 256 and the process's own
    assert spare == 100
    assert probe.returncode == 0, err
    assert "holds at most 256 connections, not 1024" in err
