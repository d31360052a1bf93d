"""Run one match between bots launched as local processes (what ``arena match`` does).

A thin use of :class:`arena.hosting.MatchHost` (which owns the referee, the sandbox, the exit
watch and the reaping): one host, one match, then everything is stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from arena.botref import resolve
from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules
from arena.hosting import BotSpec, LocalSeat, MatchHost, sandbox_choice
from arena.referee import MatchResult, RefereeConfig, RefereeServer, TimeControl
from arena.referee.match import Match
from arena.sandbox.limits import SandboxLimits

__all__ = ["BotSpec", "play_local_match", "resolve_bot", "sandbox_choice"]


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
    rules: Rules = DEFAULT_RULES,
) -> MatchResult:
    """Launch ``bots`` (seat k = ``bots[k]``), play one match under ``rules`` and reap every process.

    With ``sandbox`` limits every bot runs under bubblewrap (:mod:`arena.sandbox.bwrap`);
    :class:`SandboxUnavailableError` when that is impossible here.
    """
    host = MatchHost(sandbox=sandbox, log_dir=log_dir, server=RefereeServer(config))
    seats = [
        LocalSeat(bot, extra_env=extra_env[seat] if extra_env else None) for seat, bot in enumerate(bots)
    ]
    try:
        await host.start()
        return await host.play(seats, seed, control, match_id=match_id, on_event=on_event, rules=rules)
    finally:
        await host.close()
