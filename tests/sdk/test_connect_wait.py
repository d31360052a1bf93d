"""The SDK keeps trying its first connection for a while (``--connect-wait``, default 10 s):
it gave up at the first UNAVAILABLE (exit 2), and an innocent bot whose connection the
referee's side dropped at once, in a tournament beside bots flooding the referee with
connections, forfeited as ``crashed`` (7 of 92 games each for greedy and random in a
round robin of seven bots, five of them raw-HTTP/2 attackers).  Here the referee starts
listening 1.5 s after the bots: they connect then and play the match through."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path

from arena.referee.server import RefereeConfig, RefereeServer
from arena.referee.timecontrol import TimeControl

BOTS = Path(__file__).resolve().parents[2] / "bots"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bots_started_before_the_referee_listens_connect_and_play() -> None:
    async def run() -> tuple[tuple[object, ...], list[int | None], float]:
        address = f"127.0.0.1:{_free_port()}"
        server = RefereeServer(RefereeConfig())
        sessions = [server.session("greedy"), server.session("random")]
        bots = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                str(BOTS / f"{name}_bot.py"),
                f"--address={address}",
                env={**os.environ, "ARENA_TOKEN": session.token},
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            for name, session in zip(("greedy", "random"), sessions, strict=True)
        ]
        await asyncio.sleep(1.5)  # both have failed to connect by now, at least once
        started = time.monotonic()
        await server.start(address)
        try:
            result = await server.play(sessions, 5, TimeControl(move_time=2.0, bank=5.0))
            codes = [await asyncio.wait_for(b.wait(), 30) for b in bots]
        finally:
            for b in bots:
                if b.returncode is None:
                    b.kill()
            await server.stop(0)
        return result.forfeits, codes, time.monotonic() - started

    forfeits, codes, took = asyncio.run(run())
    assert forfeits == (), forfeits
    assert codes == [0, 0]
    assert took < 60
