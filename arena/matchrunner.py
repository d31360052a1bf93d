"""Run one match between bots launched as local processes (what ``arena match`` does).

Starts a referee on a private Unix socket, launches every bot with its own token, plays the
match, and makes sure every bot process is gone afterwards, whatever happened.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.referee import MatchResult, RefereeConfig, RefereeServer, TimeControl
from arena.referee.match import Match
from arena.sandbox import BotLaunchError, BotProcess, launch_command
from arena.sandbox.bwrap import require_bwrap
from arena.sandbox.limits import SandboxLimits

REPO = Path(__file__).resolve().parent.parent
SAMPLE_BOTS = {"random": "random_bot.py", "greedy": "greedy_bot.py", "search": "search_bot.py"}


def sandbox_choice(no_sandbox: bool, limits: SandboxLimits | None = None) -> SandboxLimits | None:
    """The sandbox to use: None when the user opted out (flag or ARENA_SANDBOX=off)."""
    if no_sandbox or os.environ.get("ARENA_SANDBOX", "").lower() in ("off", "0", "no", "false"):
        return None
    return limits or SandboxLimits()


@dataclass(frozen=True)
class BotSpec:
    """A bot to launch: a display name and the argv that starts it."""

    name: str
    command: tuple[str, ...]


def resolve_bot(ref: str) -> BotSpec:
    """A sample bot by name (``random``, ``greedy``, ...) or a script/executable by path.

    Raises :class:`BotLaunchError` saying what was wrong.
    """
    if ref in SAMPLE_BOTS and not Path(ref).exists():
        path = REPO / "bots" / SAMPLE_BOTS[ref]
        if not path.exists():
            raise BotLaunchError(f"sample bot {ref!r} is not available in {REPO / 'bots'}")
        return BotSpec(ref, tuple(launch_command(path)))
    path = Path(ref)
    if not path.exists():
        names = ", ".join(SAMPLE_BOTS)
        raise BotLaunchError(f"{ref}: no such file, and not a sample bot name ({names})")
    return BotSpec(path.stem, tuple(launch_command(path)))


async def play_local_match(
    bots: Sequence[BotSpec],
    seed: int,
    control: TimeControl,
    *,
    match_id: str | None = None,
    log_dir: Path | None = None,
    config: RefereeConfig | None = None,
    on_event: Callable[[Match], None] | None = None,
    extra_env: Sequence[dict[str, str]] | None = None,
    sandbox: SandboxLimits | None = None,
) -> MatchResult:
    """Launch ``bots`` (seat k = ``bots[k]``), play one match and reap every process.

    With ``sandbox`` limits every bot runs under bubblewrap (:mod:`arena.sandbox.bwrap`);
    :class:`SandboxUnavailableError` when that is impossible here.
    """
    if sandbox is not None:
        require_bwrap()
    sock_dir = Path(tempfile.mkdtemp(prefix="arena-"))
    server = RefereeServer(config)
    procs: list[BotProcess] = []
    try:
        address = await server.start(f"unix:{sock_dir / 'referee.sock'}")
        sessions = [server.session(b.name) for b in bots]
        for seat, (bot, session) in enumerate(zip(bots, sessions, strict=True)):
            proc = BotProcess(
                bot.name,
                bot.command,
                log_dir=log_dir,
                extra_env=extra_env[seat] if extra_env else None,
                sandbox=sandbox,
            )
            procs.append(proc)
            await proc.start(address, session.token, log_stem=f"{match_id or 'match'}-seat{seat}-{bot.name}")
        return await server.play(
            sessions,
            seed,
            control,
            match_id=match_id,
            probe=lambda seat: procs[seat].probe(),
            evidence=lambda seat: procs[seat].evidence(),
            settle=lambda seat: procs[seat].settle(),
            on_event=on_event,
            cpu_time=lambda seat: procs[seat].cpu_time(),
        )
    finally:
        for proc in procs:
            with contextlib.suppress(Exception):
                await proc.stop(grace=0.5)
        await server.stop(0.2)
        shutil.rmtree(sock_dir, ignore_errors=True)
