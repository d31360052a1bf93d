"""Time away is not think time, with a real remote bot (the in-memory cases are in
``tests/referee/test_away_time.py``): its process is killed as a decision is asked, and a new one
with the same token connects later; the decision records the outage as ``away_ms``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.engine import legal_actions, replay
from arena.lobby import Lobby, LobbyConfig
from arena.referee.match import Match
from arena.store.bots import add_remote_bot
from arena.store.db import Database
from tests.referee.test_away_time import decisions_with_away
from tests.remote.samplebot import random_remote_bot

ROOT = Path(__file__).resolve().parents[2]


def test_remote_bot_killed_mid_decision_and_back(db: Database) -> None:
    """The issue's case on its 1 s + 2 s clock: the remote bot's process is killed (SIGKILL) as
    its decision is asked, and a new process with the same token connects 2.5 s later.  The
    match goes on without a forfeit; the decision that spanned the outage records the outage as
    ``away_ms`` (over 2.5 s), and ``ms``, think and think_max stay small (the old referee recorded
    the whole span, some 3.5 s, as think time)."""
    _, token = add_remote_bot(db, "remote")
    bots: list[asyncio.subprocess.Process] = []

    async def main() -> Lobby:
        loop = asyncio.get_running_loop()
        restarted: list[asyncio.Task[None]] = []

        async def restart() -> None:
            await asyncio.sleep(2.5)
            bots.append(await random_remote_bot(port, token, stderr=asyncio.subprocess.DEVNULL))

        def on_event(m: Match) -> None:
            seat = m.names.index("remote")
            s = m.state
            due = not restarted and m.events >= 40 and not s.is_chance and not s.is_over and s.seat == seat
            if due and len(legal_actions(s)) > 1:  # the referee asks this decision next
                bots[0].kill()
                restarted.append(loop.create_task(restart()))

        config = LobbyConfig(
            listen="127.0.0.1:0",
            opponents=("greedy",),
            games=1,
            move_time=1.0,  # the 1 s + 2 s clock
            bank=2.0,
            grace=20.0,
            sandbox=None,
        )
        lobby = Lobby(db, config, log=lambda _: None, on_event=on_event)
        address = await lobby.start()
        port = int(address.rsplit(":", 1)[1])
        bots.append(await random_remote_bot(port, token, stderr=asyncio.subprocess.DEVNULL))
        try:
            await asyncio.wait_for(lobby.run(), 120)
        finally:
            await lobby.close()
            for bot in bots:
                if bot.returncode is None:
                    bot.kill()
                await bot.wait()
        assert restarted, "the test never killed the remote bot"
        return lobby

    lobby = asyncio.run(main())
    (result,) = lobby.results
    assert result.forfeits == (), result.forfeits
    (line,) = decisions_with_away(result.replay)
    print("the decision that spanned the outage:", line)
    seat = line["seat"]
    assert result.seats[seat].name == "remote"
    assert line["away_ms"] >= 2500, line
    assert line["ms"] < 1000, line
    remote = result.seats[seat]
    assert remote.think_max < 1.0, remote
    assert replay(result.replay).result["think_s"][seat] < 2.5
