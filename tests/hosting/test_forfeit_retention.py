"""A kept-running bot that forfeits is dropped and restarted; nothing of its old session or of the
match it forfeited stays in the host's memory.

Before: every dropped kept-running session stayed in the referee's registry of retired tokens
(waiting to tell a reconnecting stream goodbye), and with it the seat it was playing and so the
whole match (its game, record and channels): a bot that crashed at its third decision of every
match grew a long-running host (a tournament worker, the ladder of ``arena serve``) by about
50 KB per match, for ever.  Real bot processes, in the real sandbox where bubblewrap works.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

import pytest

from arena.hosting import BotSpec, LocalSeat, MatchHost
from arena.matchrunner import resolve_bot
from arena.referee import TimeControl
from arena.referee.match import Match
from arena.sandbox import SandboxLimits, bwrap_problem

FAULTY = Path(__file__).resolve().parents[2] / "bots" / "faulty"
FAST = TimeControl(0.5, 2.0)
MATCHES = 5


@pytest.mark.parametrize(
    "limits",
    [
        pytest.param(
            SandboxLimits(),
            marks=pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap: {bwrap_problem()}"),
        ),
        None,
    ],
    ids=["sandboxed", "unsandboxed"],
)
def test_a_forfeiting_kept_bot_leaves_neither_its_session_nor_its_matches_behind(
    limits: SandboxLimits | None,
) -> None:
    greedy = resolve_bot("greedy")
    quitter = BotSpec("quitter", resolve_bot(str(FAULTY / "quitter_bot.py")).command)
    matches: weakref.WeakSet[Match] = weakref.WeakSet()

    async def scenario() -> tuple[list[str], int, int]:
        host = MatchHost(sandbox=limits)
        await host.start()
        try:
            reasons: list[str] = []
            for seed in range(MATCHES):
                result = await host.play(
                    [
                        LocalSeat(greedy, persistent=True, identity="a"),
                        LocalSeat(quitter, persistent=True, identity="q"),
                    ],
                    1000 + seed,
                    FAST,
                    match_id=f"r{seed}",
                    on_event=matches.add,
                )
                reasons += [str(f.reason) for f in result.forfeits]
            gc.collect()
            registry = host.server.registry
            return reasons, len(registry._retired), len(matches)
        finally:
            await host.close()

    reasons, retired, alive = asyncio.run(scenario())
    assert reasons == ["crashed"] * MATCHES
    assert retired == 0, f"{retired} dropped sessions kept for a goodbye no process will ever ask for"
    assert alive <= 1, f"{alive} of {MATCHES} finished matches still in memory"
