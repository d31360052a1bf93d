"""The SDK tests play real matches: an in-process referee on a Unix socket (real gRPC) and every
bot a real process started with ``--address``/``--token``, as the arena starts bots."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.referee import MatchResult, RefereeServer, TimeControl
from arena.referee.match import Match

HERE = Path(__file__).resolve().parent
BOTS = HERE / "bots"
SAMPLES = HERE.parents[1] / "bots"


@dataclass(frozen=True)
class Seat:
    """A bot to start: its file and extra environment."""

    path: Path
    env: dict[str, str] | None = None


async def _play(
    seats: Sequence[Seat],
    seed: int,
    control: TimeControl,
    match_id: str | None,
    on_event: Callable[[Match], None] | None,
) -> MatchResult:
    sock_dir = Path(tempfile.mkdtemp(prefix="arena-sdk-"))
    server = RefereeServer()
    procs: list[asyncio.subprocess.Process] = []
    try:
        address = await server.start(f"unix:{sock_dir / 'referee.sock'}")
        sessions = [server.session(s.path.stem) for s in seats]
        for seat, session in zip(seats, sessions, strict=True):
            env = {**os.environ, **(seat.env or {})}
            argv = [str(seat.path), f"--address={address}", f"--token={session.token}"]
            procs.append(
                await asyncio.create_subprocess_exec(
                    sys.executable, *argv, env=env, stdin=asyncio.subprocess.DEVNULL
                )
            )
        result = await server.play(sessions, seed, control, match_id=match_id, on_event=on_event)
        for proc in procs:  # each got its goodbye: it exits by itself
            await asyncio.wait_for(proc.wait(), timeout=30)
        return result
    finally:
        for proc in procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        await server.stop(0.2)
        for p in sock_dir.iterdir():
            p.unlink()
        sock_dir.rmdir()


def play(
    seats: Sequence[Seat],
    seed: int = 7,
    control: TimeControl | None = None,
    *,
    match_id: str | None = None,
    on_event: Callable[[Match], None] | None = None,
) -> MatchResult:
    """Play one match of real bot processes; every process has exited when it returns."""
    return asyncio.run(_play(seats, seed, control or TimeControl(2.0, 20.0), match_id, on_event))


def records(path: Path) -> list[dict[str, Any]]:
    """The JSON lines a recording bot wrote."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replay_lines(result: MatchResult) -> list[dict[str, Any]]:
    """The replay's event lines (no header, no result line)."""
    return [json.loads(line) for line in result.replay.splitlines()[1:-1]]
