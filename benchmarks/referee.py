"""Referee latency and throughput, all in one run on this machine.

Usage: .venv/bin/python benchmarks/referee.py [--quick] [--round-trips N] [--matches N] [--runs N]

(a) raw gRPC aio bidi ping-pong on loopback: an aio server here, an aio client in another
    process, one tiny message each way (p50/p99 round trip);
(b) the referee's per-decision round trip with trivial SDK bots (first legal action), as the
    referee measures it: from sending the request to having the checked answer (p50/p99);
(c) full 4-player matches per second with greedy bots kept running across matches;
(d) the per-decision path piece by piece (a separate pass, each piece timed where it runs):
    on the referee, legal actions to text, state to protobuf, events to protobuf, the legality
    check of the answer, the clock and the record; on the bot (the SDK), decoding the request,
    the state from protobuf and parsing the legal actions;
(e) where one round trip of (b) goes, as a timeline across the processes (``time.monotonic`` is
    one clock for every process on the host): the referee builds the request and queues it, the
    stream's task picks it up, gRPC carries it to the bot, the bot's SDK reads it and answers,
    gRPC carries the answer back, and the match's task picks it up (p50 of each leg).
Prints the ratio (b)/(a) at p50 for each of ``--runs`` interleaved runs (a then b), and their
spread.  ``--quick``: 1500 round trips, 3 runs, 3 matches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


async def two_bots(script: str) -> tuple[RefereeServer, list[Any], list[BotProcess]]:
    """A referee and two kept-running SDK bots (``benchmarks/<script>``) connected to it."""
    server = RefereeServer()
    address = await server.start("127.0.0.1:0")
    command = launch_command(HERE / script)
    sessions = [server.session(f"{Path(script).stem}-{k}", persistent=True) for k in range(2)]
    procs = [BotProcess(s.name, command) for s in sessions]
    for p, s in zip(procs, sessions, strict=True):
        await p.start(address, s.token)
    return server, sessions, procs


async def close(server: RefereeServer, sessions: list[Any], procs: list[BotProcess]) -> None:
    """Let the bots go and stop the referee."""
    for s in sessions:
        server.revoke(s)
    for p in procs:
        await p.stop()
    await server.stop()


async def referee_round_trips(n: int) -> list[float]:
    server, sessions, procs = await two_bots("trivial_bot.py")
    times: list[float] = []
    seed = 0
    while len(times) < n:
        result = await server.play(sessions, seed, TimeControl(unlimited=True))
        times += [json.loads(line)["ms"] / 1000 for line in result.replay.splitlines() if '"ms"' in line]
        seed += 1
    await close(server, sessions, procs)
    return times[len(times) // 10 :]


class Pieces:
    """Wraps the referee's per-decision functions with timers (module attributes, restored after)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.saved: list[tuple[object, str, object]] = []

    def wrap(self, owner: object, attr: str, label: str) -> None:
        fn = getattr(owner, attr)

        def timed(*args: object, **kwargs: object) -> object:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - t
                self.calls[label] = self.calls.get(label, 0) + 1

        self.replace(owner, attr, timed)

    def replace(self, owner: object, attr: str, new: object) -> None:
        """Set ``owner.attr`` to ``new`` until :meth:`restore` (a class's own attribute is kept
        as it is stored, so a staticmethod goes back as one)."""
        own = vars(owner) if isinstance(owner, type) else {}
        self.saved.append((owner, attr, own[attr] if attr in own else getattr(owner, attr)))
        setattr(owner, attr, new)

    def restore(self) -> None:
        for owner, attr, fn in reversed(self.saved):
            setattr(owner, attr, fn)


async def breakdown(n: int) -> tuple[dict[str, float], int]:
    """Microseconds per decision of each piece of the per-decision path, and the decisions."""
    from arena import sdk
    from arena.engine import record
    from arena.referee import grpc_channel, match

    pieces = Pieces()
    pieces.wrap(match.Match, "_request", "referee: legal actions to text (request built)")
    pieces.wrap(grpc_channel, "state_to_pb", "referee: state to protobuf")
    pieces.wrap(grpc_channel, "event_to_pb", "referee: events to protobuf")
    pieces.wrap(grpc_channel, "request_to_pb", "referee: whole request to protobuf")
    pieces.wrap(match, "judge", "referee: legality check of the answer")
    pieces.wrap(match.Match, "_charge", "referee: clock")
    pieces.wrap(record.RecordWriter, "decision", "referee: record line")
    requests: list[bytes] = []
    keep = grpc_channel.request_to_pb

    def capture(request: object) -> object:
        msg = keep(request)  # type: ignore[arg-type]
        if len(requests) < 2000:
            requests.append(pb.RefereeMessage(request=msg).SerializeToString())
        return msg

    grpc_channel.request_to_pb = capture  # type: ignore[assignment]
    try:
        times = await referee_round_trips(n)
    finally:
        grpc_channel.request_to_pb = keep
        pieces.restore()
    decisions = pieces.calls.get("referee: legality check of the answer", 1)
    out = {k: v / decisions * 1e6 for k, v in pieces.seconds.items()}
    # the bot's side, on the same requests (the SDK's _answer without the bot's choice)
    from arena.engine import parse_action
    from arena.wire import state_from_pb

    t0 = time.perf_counter()
    msgs = [pb.RefereeMessage.FromString(b) for b in requests]
    t1 = time.perf_counter()
    for m in msgs:
        state_from_pb(m.request.state)
    t2 = time.perf_counter()
    for m in msgs:
        tuple(parse_action(a) for a in m.request.legal_actions)
    t3 = time.perf_counter()
    k = max(1, len(msgs))
    out["bot: decode the request"] = (t1 - t0) / k * 1e6
    out["bot: state from protobuf"] = (t2 - t1) / k * 1e6
    out["bot: parse the legal actions"] = (t3 - t2) / k * 1e6
    assert sdk is not None
    return out, len(times)


async def timeline(n: int) -> dict[str, float]:
    """(e): microseconds (p50) of each leg of the round trip, and of the whole, over ``n``
    decisions of trivial bots (benchmarks/trace_bot.py notes the bot's side)."""
    import glob
    import os
    import shutil
    import tempfile

    from arena.referee import grpc_channel, match, seatlink
    from arena.referee.channel import Inbound, Request
    from arena.referee.seatlink import Queued

    marks: dict[tuple[int, int], dict[str, float]] = {}
    current = [0]

    def mark(rid: int, what: str) -> None:
        marks.setdefault((current[0], rid), {})[what] = time.monotonic()

    class StampedOutbox(asyncio.Queue[pb.RefereeMessage | None]):
        async def get(self) -> pb.RefereeMessage | None:
            message = await super().get()
            if message is not None and message.WhichOneof("message") == "request":
                mark(message.request.request_id, "picked")
            return message

    sent_fn, deliver_fn = seatlink.SeatLink.request_sent, seatlink.SeatLink.deliver
    next_fn, init_fn = match.Match._next, grpc_channel.GrpcSeatChannel.__init__

    def request_sent(self: seatlink.SeatLink, request: Request) -> None:
        mark(request.request_id, "sent")
        sent_fn(self, request)
        mark(request.request_id, "queued")

    def deliver(self: seatlink.SeatLink, item: Inbound) -> None:
        rid = getattr(getattr(item, "message", item), "request_id", None)
        if rid is not None:
            mark(rid, "arrived")
        deliver_fn(self, item)

    async def next_item(link: seatlink.SeatLink, sent: float, wall: float | None) -> Queued | None:
        item = await next_fn(link, sent, wall)
        rid = getattr(getattr(item, "message", None), "request_id", None)
        if rid is not None:
            mark(rid, "taken")
        return item

    def init(self: grpc_channel.GrpcSeatChannel) -> None:
        init_fn(self)
        self.outbox = StampedOutbox()

    patches = Pieces()
    patches.replace(seatlink.SeatLink, "request_sent", request_sent)
    patches.replace(seatlink.SeatLink, "deliver", deliver)
    patches.replace(match.Match, "_next", staticmethod(next_item))
    patches.replace(grpc_channel.GrpcSeatChannel, "__init__", init)
    out = tempfile.mkdtemp(prefix="arena-trace-")
    os.environ["ARENA_TRACE_OUT"] = f"{out}/bot"
    seeds: dict[str, int] = {}
    try:
        server, sessions, procs = await two_bots("trace_bot.py")
        seed = 0
        while sum(1 for k in marks if k[0] < seed) < n:
            current[0] = seed
            result = await server.play(sessions, seed, TimeControl(unlimited=True))
            seeds[result.match_id] = seed
            seed += 1
        await close(server, sessions, procs)
    finally:
        patches.restore()
        del os.environ["ARENA_TRACE_OUT"]
    bot: dict[tuple[int, int], tuple[float, float]] = {}
    for path in glob.glob(f"{out}/bot.*"):
        for match_id, rid, t_in, t_out in json.loads(Path(path).read_text()):
            if match_id in seeds:
                bot[(seeds[match_id], rid)] = (t_in, t_out)
    legs = {
        "referee: request to protobuf, queued": ("sent", "queued"),
        "referee: the stream's task picks it up": ("queued", "picked"),
        "gRPC to the bot, SDK reads it": ("picked", "bot_in"),
        "bot: SDK decodes, chooses, encodes": ("bot_in", "bot_out"),
        "gRPC to the referee, stream's task reads it": ("bot_out", "arrived"),
        "referee: the match's task takes it": ("arrived", "taken"),
        "whole round trip": ("sent", "taken"),
    }
    spans: dict[str, list[float]] = {label: [] for label in legs}
    needed = {"sent", "queued", "picked", "arrived", "taken"}
    keys = sorted(k for k in marks if k in bot and needed <= set(marks[k]))
    for key in keys[len(keys) // 10 :]:  # drop the warm-up
        t = dict(marks[key])
        t["bot_in"], t["bot_out"] = bot[key]
        for label, (a, b) in legs.items():
            spans[label].append(t[b] - t[a])
    shutil.rmtree(out, ignore_errors=True)
    return {label: statistics.median(v) * 1e6 for label, v in spans.items() if v}


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


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


async def main() -> None:
    parser = argparse.ArgumentParser(description="referee latency and throughput")
    parser.add_argument("--quick", action="store_true", help="1500 round trips, 3 runs, 3 matches")
    parser.add_argument("--round-trips", type=int, default=4000)
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5, help="interleaved (a)/(b) runs")
    args = parser.parse_args()
    if args.quick:
        args.round_trips, args.runs, args.matches = 1500, 3, 3
    print(f"uptime: {uptime()}")
    ratios = []
    for run in range(1, args.runs + 1):
        raw = await raw_ping_pong(args.round_trips)
        ref = await referee_round_trips(args.round_trips)
        print(f"run {run}:")
        for label, values in (
            ("(a) raw gRPC aio ping-pong:      ", raw),
            ("(b) referee decision round trip:", ref),
        ):
            p50, p99 = pct(values, 0.5), pct(values, 0.99)
            print(f"  {label} p50 {p50:.3f} ms  p99 {p99:.3f} ms  (n={len(values)})")
        ratio = pct(ref, 0.5) / pct(raw, 0.5)
        ratios.append(ratio)
        print(
            f"      ratio (b)/(a) at p50: {ratio:.2f}  (mean ratio "
            f"{statistics.mean(ref) / statistics.mean(raw):.2f})",
            flush=True,
        )
    print(
        f"ratio (b)/(a) at p50 over {len(ratios)} runs: median {statistics.median(ratios):.2f}, "
        f"min {min(ratios):.2f}, max {max(ratios):.2f}"
    )
    pieces, _ = await breakdown(min(args.round_trips, 2000))
    print("(d) the per-decision path, microseconds per decision (timed separately, timers included):")
    for label, us in pieces.items():
        print(f"      {label:50s} {us:7.1f}")
    legs = await timeline(min(args.round_trips, 3000))
    print("(e) one round trip of (b), leg by leg across the processes (p50, microseconds):")
    for label, us in legs.items():
        print(f"      {label:50s} {us:7.1f}")
    count, elapsed = await greedy_matches(args.matches)
    print(
        f"(c) 4-player greedy matches, bots kept running: {count / elapsed:.2f} matches/s "
        f"({elapsed / count * 1000:.0f} ms per match)"
    )
    print(f"uptime: {uptime()}")


if __name__ == "__main__":
    asyncio.run(main())
