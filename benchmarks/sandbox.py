"""What the bubblewrap sandbox costs: launch overhead and per-decision round trip.

Usage: .venv/bin/python benchmarks/sandbox.py [--launches N] [--round-trips N]

(a) launch to connected: from just before a bot process is started (for the sandbox: its cgroup
    created, ``sh`` joining it, ``bwrap`` setting up the namespaces and mounts, ``prlimit``) until
    the referee has accepted the bot's authenticated stream (its session's stream is open, the
    moment a Welcome would go out); N launches each way, one after another, of the trivial SDK
    bot (first legal action), p50 and mean;
(b) the referee's per-decision round trip (request sent to checked answer, as the referee
    measures it) with two trivial bots kept running, sandboxed vs not, p50/p99.

Both ways use the same referee on a Unix socket (the only way into the sandbox).  Prints each
figure and the ratio sandboxed/unsandboxed.  Needs bubblewrap (``apt-get install bubblewrap``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.referee import RefereeServer, TimeControl
from arena.sandbox import BotProcess, SandboxLimits, bwrap_problem, launch_command

HERE = Path(__file__).resolve().parent
BOT = HERE / "trivial_bot.py"


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def launch_to_connected(server: RefereeServer, sandbox: SandboxLimits | None, n: int) -> list[float]:
    """Seconds from starting the bot until its authenticated stream is open, ``n`` times."""
    command = launch_command(BOT)
    times: list[float] = []
    for k in range(n):
        session = server.session(f"launch-{k}", persistent=True)
        proc = BotProcess(session.name, command, sandbox=sandbox)
        start = time.perf_counter()
        await proc.start(server.address, session.token)
        while not session.stream_open:
            if proc.probe() is not None:
                raise RuntimeError(f"the bot died before connecting: {proc.stderr_tail()}")
            await asyncio.sleep(0.0005)
        times.append(time.perf_counter() - start)
        server.revoke(session)  # its waiting stream gets a goodbye: the bot exits
        await proc.stop(grace=2.0)
    return times


async def round_trips(server: RefereeServer, sandbox: SandboxLimits | None, n: int) -> list[float]:
    """The referee's per-decision round trip (seconds) over matches of two trivial bots."""
    command = launch_command(BOT)
    sessions = [server.session(f"trivial-{k}", persistent=True) for k in range(2)]
    procs = [BotProcess(s.name, command, sandbox=sandbox) for s in sessions]
    for p, s in zip(procs, sessions, strict=True):
        await p.start(server.address, s.token)
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
    return times[len(times) // 10 :]  # drop the warm-up


async def main() -> None:
    parser = argparse.ArgumentParser(description="sandbox launch overhead and round trip")
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--round-trips", type=int, default=2000)
    args = parser.parse_args()
    problem = bwrap_problem()
    if problem is not None:
        sys.exit(f"cannot measure the sandbox here: {problem}")
    sandbox = SandboxLimits()
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        server = RefereeServer()
        await server.start(f"unix:{Path(tmp) / 'referee.sock'}")
        try:
            await launch_to_connected(server, None, 1)  # warm the page cache
            await launch_to_connected(server, sandbox, 1)
            plain = await launch_to_connected(server, None, args.launches)
            boxed = await launch_to_connected(server, sandbox, args.launches)
            print(f"(a) launch to connected, trivial SDK bot, {args.launches} launches each, one at a time:")
            for label, values in (("unsandboxed", plain), ("sandboxed  ", boxed)):
                mean, lo, hi = (statistics.mean(values) * 1000, min(values) * 1000, max(values) * 1000)
                print(
                    f"    {label} p50 {pct(values, 0.5):7.1f} ms  mean {mean:7.1f} ms"
                    f"  (min {lo:.1f}, max {hi:.1f})"
                )
            extra = pct(boxed, 0.5) - pct(plain, 0.5)
            print(
                f"    sandboxed/unsandboxed: p50 {pct(boxed, 0.5) / pct(plain, 0.5):.2f}x, mean "
                f"{statistics.mean(boxed) / statistics.mean(plain):.2f}x  (+{extra:.1f} ms at p50)"
            )
            rt_plain = await round_trips(server, None, args.round_trips)
            rt_boxed = await round_trips(server, sandbox, args.round_trips)
            print("(b) referee per-decision round trip, two trivial bots kept running:")
            for label, values in (("unsandboxed", rt_plain), ("sandboxed  ", rt_boxed)):
                p50, p99 = pct(values, 0.5), pct(values, 0.99)
                print(f"    {label} p50 {p50:.3f} ms  p99 {p99:.3f} ms  (n={len(values)})")
            print(
                f"    sandboxed/unsandboxed: p50 {pct(rt_boxed, 0.5) / pct(rt_plain, 0.5):.2f}x, mean "
                f"{statistics.mean(rt_boxed) / statistics.mean(rt_plain):.2f}x"
            )
        finally:
            await server.stop(0.2)


if __name__ == "__main__":
    asyncio.run(main())
