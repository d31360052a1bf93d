"""Referee latency and throughput, all in one run on this machine.

Usage: .venv/bin/python benchmarks/referee.py [--round-trips N] [--matches N]

(a) raw gRPC aio bidi ping-pong on loopback: an aio server here, an aio client in another
    process, one tiny message each way (p50/p99 round trip);
(b) the referee's per-decision round trip with trivial SDK bots (first legal action), as the
    referee measures it: from sending the request to having the checked answer (p50/p99);
(c) full 4-player matches per second with greedy bots kept running across matches.
Prints the ratio (b)/(a) at p50.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import grpc

from arena.referee import RefereeServer, TimeControl
from arena.sandbox import BotProcess, launch_command
from arena.v1 import arena_pb2 as pb

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
METHOD = "/arena.v1.Referee/Play"

CLIENT = """
import asyncio, sys, time, json, grpc
from arena.v1 import arena_pb2 as pb
async def main(address, n):
    async with grpc.aio.insecure_channel(address) as ch:
        call = ch.stream_stream(sys.argv[3], request_serializer=pb.BotMessage.SerializeToString,
                                response_deserializer=pb.RefereeMessage.FromString)()
        times = []
        for i in range(n):
            t = time.perf_counter()
            await call.write(pb.BotMessage(action=pb.ActionReply(request_id=i, action="stop")))
            await call.read()
            times.append(time.perf_counter() - t)
        await call.done_writing()
        print(json.dumps(times))
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def raw_ping_pong(n: int) -> list[float]:
    async def echo(requests, context):  # type: ignore[no-untyped-def]
        async for m in requests:
            yield pb.RefereeMessage(request=pb.DecisionRequest(request_id=m.action.request_id))

    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = grpc.stream_stream_rpc_method_handler(
        echo,
        request_deserializer=pb.BotMessage.FromString,
        response_serializer=pb.RefereeMessage.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("arena.v1.Referee", {"Play": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, f"127.0.0.1:{port}", str(n), METHOD, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    await server.stop(0)
    return list(json.loads(out))[n // 10 :]  # drop the warm-up


async def referee_round_trips(n: int) -> list[float]:
    server = RefereeServer()
    address = await server.start("127.0.0.1:0")
    command = launch_command(HERE / "trivial_bot.py")
    sessions = [server.session(f"trivial-{k}", persistent=True) for k in range(2)]
    procs = [BotProcess(s.name, command) for s in sessions]
    for p, s in zip(procs, sessions, strict=True):
        await p.start(address, s.token)
    times: list[float] = []
    seed = 0
    while len(times) < n:
        result = await server.play(sessions, seed, TimeControl(unlimited=True))
        times += [json.loads(line)["ms"] / 1000 for line in result.replay.splitlines() if '"ms"' in line]
        seed += 1
    for s in sessions:
        server.revoke(s)
    for p in procs:
        await p.stop()
    await server.stop()
    return times[len(times) // 10 :]


async def greedy_matches(count: int) -> tuple[int, float]:
    server = RefereeServer()
    address = await server.start("127.0.0.1:0")
    command = launch_command(ROOT / "bots" / "greedy_bot.py")
    sessions = [server.session(f"greedy-{k}", persistent=True) for k in range(4)]
    procs = [BotProcess(s.name, command) for s in sessions]
    for p, s in zip(procs, sessions, strict=True):
        await p.start(address, s.token)
    await server.play(sessions, 10_000, TimeControl(unlimited=True))  # warm-up: bots connected
    start = time.perf_counter()
    for seed in range(count):
        result = await server.play(sessions, seed, TimeControl(5, 30))
        assert all(s.termination == "normal" for s in result.seats), result.seats
    elapsed = time.perf_counter() - start
    for s in sessions:
        server.revoke(s)
    for p in procs:
        await p.stop()
    await server.stop()
    return count, elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description="referee latency and throughput")
    parser.add_argument("--round-trips", type=int, default=4000)
    parser.add_argument("--matches", type=int, default=20)
    args = parser.parse_args()
    raw = await raw_ping_pong(args.round_trips)
    ref = await referee_round_trips(args.round_trips)
    for label, values in (
        ("(a) raw gRPC aio ping-pong:      ", raw),
        ("(b) referee decision round trip:", ref),
    ):
        print(f"{label} p50 {pct(values, 0.5):.3f} ms  p99 {pct(values, 0.99):.3f} ms  (n={len(values)})")
    print(
        f"    ratio (b)/(a) at p50: {pct(ref, 0.5) / pct(raw, 0.5):.2f}  (mean ratio "
        f"{statistics.mean(ref) / statistics.mean(raw):.2f})"
    )
    count, elapsed = await greedy_matches(args.matches)
    print(
        f"(c) 4-player greedy matches, bots kept running: {count / elapsed:.2f} matches/s "
        f"({elapsed / count * 1000:.0f} ms per match)"
    )


if __name__ == "__main__":
    asyncio.run(main())
