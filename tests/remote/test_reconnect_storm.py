"""A remote bot that drops mid-match and reconnects many times in quick succession, raw HTTP/2 over
TCP, keeps its seat: its last stream takes the seat again.  Before, a stream that came back before
the referee had heard that the one before it ended (gRPC ends such a call below the referee and the
seat is told 0.2 s later) was parked for the bot's next match, and the match forfeited the bot
as ``disconnected``: "did not reconnect within 5s" (an outside review's storm of 200 reconnects)."""

from __future__ import annotations

import asyncio
import socket
import time

from arena.lobby import Lobby, LobbyConfig
from arena.store.bots import add_remote_bot
from arena.store.db import Database
from tests.remote.rawbot import answer_first_legal, messages, open_stream


def _play(sock: socket.socket, drop_at: int | None) -> str:
    """Answer every request with its first legal action until the result ("result"), or until
    request ``drop_at`` arrives ("dropped", the socket closed unanswered)."""
    seen = 0
    sock.settimeout(10)
    for message in messages(sock):
        if message.HasField("result"):
            return "result"
        if message.HasField("request"):
            seen += 1
            if seen == drop_at:
                sock.close()
                return "dropped"
            answer_first_legal(sock, message.request)
    return "eof"


def _storming_bot(port: int, token: str) -> str:
    assert _play(open_stream(port, token), drop_at=3) == "dropped"
    for _ in range(200):  # reconnects, each stream dropped at once
        open_stream(port, token).close()
    time.sleep(0.05)
    return _play(open_stream(port, token), drop_at=None)


def test_a_reconnect_storm_keeps_the_seat(db: Database) -> None:
    _, token = add_remote_bot(db, "remote")

    async def main() -> tuple[Lobby, str]:
        config = LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=1, grace=5.0, sandbox=None)
        lobby = Lobby(db, config, log=lambda _: None)
        address = await lobby.start()
        try:
            bot = asyncio.create_task(asyncio.to_thread(_storming_bot, int(address.rsplit(":", 1)[1]), token))
            await asyncio.wait_for(lobby.run(), 30)
            ended = await asyncio.wait_for(bot, 15)
        finally:
            await lobby.close()
        return lobby, ended

    lobby, ended = asyncio.run(main())
    (result,) = lobby.results
    assert result.forfeits == (), result.forfeits
    assert ended == "result"
