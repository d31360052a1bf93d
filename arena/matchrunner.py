"""Run one match between bots launched as local processes (what ``arena match`` does).

Starts a referee on a private Unix socket, launches every bot with its own token, plays the
match, and makes sure every bot process is gone afterwards, whatever happened.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.botref import resolve
from arena.referee import MatchResult, RefereeConfig, RefereeServer, TimeControl
from arena.referee.match import Match
from arena.sandbox import BotProcess
from arena.sandbox.bwrap import require_bwrap
from arena.sandbox.limits import SandboxLimits


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
    """A sample bot by name (``random``, ``greedy``, ...) or a script/executable by path, without
    the registry (see :func:`arena.botref.resolve` for the full resolution).

    Raises :class:`BotLaunchError` saying what was wrong.
    """
    bot = resolve(ref)
    return BotSpec(bot.name, bot.command)


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
    exits = _ExitRelay()
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
            proc.watch_exit(exits.handler(seat))
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
            on_start=exits.start,
        )
    finally:
        # All at once; a bot that never connected has nothing to finish: it is ended at once.
        await asyncio.gather(
            *(proc.stop(grace=0.5 if exits.connected(seat) else 0.0) for seat, proc in enumerate(procs)),
            return_exceptions=True,
        )
        await server.stop(0.2)
        shutil.rmtree(sock_dir, ignore_errors=True)


class _ExitRelay:
    """Tells the match when a bot process exits (see :meth:`Match.seat_process_exited`); an exit
    before the match exists (while the other bots start) is kept and told at its start."""

    def __init__(self) -> None:
        self.match: Match | None = None
        self.early: dict[int, str] = {}

    def handler(self, seat: int) -> Callable[[str], None]:
        def exited(how: str) -> None:
            if self.match is None:
                self.early[seat] = how
            else:
                self.match.seat_process_exited(seat, how)

        return exited

    def start(self, match: Match) -> None:
        self.match = match
        for seat, how in self.early.items():
            match.seat_process_exited(seat, how)

    def connected(self, seat: int) -> bool:
        """Whether the seat's bot ever connected to its match."""
        return self.match is not None and self.match.links[seat].attached.is_set()
