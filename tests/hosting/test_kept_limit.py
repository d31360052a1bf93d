"""A host keeps a bounded number of bot processes running between its matches.

Kept-running bots are reused across matches, keyed by bot version; nothing stopped the ones a
long-running host would never seat again.  Under ``arena serve`` every uploaded version (each
upload validated, then retired by the next) left its processes running, sandboxed, idle and
holding whatever memory they had taken (up to the sandbox's limit apiece), for the life of the
server: four uploads in a row left 9 processes of the two retired versions behind.  Now a host
keeps at most 16 kept-running bots between its matches and stops the least recently used first.
Real sandboxed bot processes and a real referee.
"""

from __future__ import annotations

import asyncio

import pytest

from arena.hosting import LocalSeat, MatchHost
from arena.matchrunner import resolve_bot
from arena.referee import TimeControl
from arena.sandbox import BotProcess, SandboxLimits, bwrap_problem

FAST = TimeControl(0.5, 2.0)
VERSIONS = 10  # matches, each between two versions never seen before: 20 kept-running bots
LIMIT = 16  # what the README promises


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap: {bwrap_problem()}")
def test_a_host_stops_its_least_recently_used_kept_bots_past_its_limit() -> None:
    bot = resolve_bot("random")

    async def scenario() -> tuple[int, int, list[int]]:
        host = MatchHost(sandbox=SandboxLimits())
        await host.start()
        started: list[BotProcess] = []
        try:
            for v in range(VERSIONS):
                seats = [LocalSeat(bot, persistent=True, identity=(v, k)) for k in range(2)]
                result = await host.play(seats, 500 + v, FAST, match_id=f"v{v}")
                assert not result.forfeits
                started += [e.proc for e in host.pool.values() if e.proc not in started]
            alive = [p for p in started if p.proc is not None and p.proc.returncode is None]
            newest = sorted(key[0][0] for key in host.pool)
            return len(started), len(alive), newest
        finally:
            await host.close()

    started, alive, newest = asyncio.run(scenario())
    assert started == 2 * VERSIONS
    assert alive <= LIMIT, f"{alive} of {started} kept-running bots still running, past {LIMIT}"
    assert newest == sorted([v for v in range(VERSIONS) for _ in range(2)][-LIMIT:])  # the oldest went
