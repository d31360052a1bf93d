"""A remote bot that drops mid-match and reconnects many times in quick succession, raw HTTP/2 over
TCP, keeps its seat: its last stream takes the seat again.  Before, a stream that came back before
the referee had heard that the one before it ended (gRPC ends such a call below the referee and the
seat is told 0.2 s later) was parked for the bot's next match, and the match forfeited the bot
as ``disconnected``: "did not reconnect within 5s" (an outside review's storm of 200 reconnects)."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from pathlib import Path

from arena.lobby import Lobby, LobbyConfig
from arena.store.bots import add_remote_bot
from arena.store.db import Database
from arena.v1 import arena_pb2 as pb
from tests.sockkit import HTTP2_PREFACE, h2_frame, hpack_literal

REPO = Path(__file__).resolve().parent.parent.parent
BIG_WINDOW = h2_frame(4, 0, 0, struct.pack(">HI", 4, 0x7FFFFFFF)) + h2_frame(
    8, 0, 0, struct.pack(">I", 2**30)
)


def _stream(port: int, token: str) -> socket.socket:
    """A connection with one Play stream open on ``token`` (stream 1)."""
    sock = socket.create_connection(("127.0.0.1", port))
    headers = [(":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play")]
    headers += [(":authority", "x"), ("content-type", "application/grpc"), ("te", "trailers")]
    block = b"".join(hpack_literal(k, v) for k, v in [*headers, ("arena-token", token)])
    sock.sendall(HTTP2_PREFACE + BIG_WINDOW + h2_frame(1, 4, 1, block))
    return sock


def _play(sock: socket.socket, drop_at: int | None) -> str:
    """Answer every request with its first legal action (acking pings) until the result ("result"),
    or until request ``drop_at`` arrives ("dropped", the socket closed unanswered)."""
    buf = data = b""
    seen = 0
    sock.settimeout(10)
    while chunk := sock.recv(65536):
        buf += chunk
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            n, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            payload, buf = buf[9 : 9 + n], buf[9 + n :]
            if kind == 6 and not flags & 1:
                sock.sendall(h2_frame(6, 1, 0, payload))
            elif kind == 4 and not flags & 1:
                sock.sendall(h2_frame(4, 1, 0, b""))
            elif kind == 0:
                data += payload
            while len(data) >= 5 and len(data) >= 5 + (size := int.from_bytes(data[1:5], "big")):
                message, data = pb.RefereeMessage.FromString(data[5 : 5 + size]), data[5 + size :]
                if message.HasField("result"):
                    return "result"
                if message.HasField("request"):
                    seen += 1
                    if seen == drop_at:
                        sock.close()
                        return "dropped"
                    action = pb.ActionReply(
                        request_id=message.request.request_id, action=message.request.legal_actions[0]
                    )
                    body = pb.BotMessage(action=action).SerializeToString()
                    sock.sendall(h2_frame(0, 0, 1, b"\0" + struct.pack(">I", len(body)) + body))
    return "eof"


def _storming_bot(port: int, token: str) -> str:
    assert _play(_stream(port, token), drop_at=3) == "dropped"
    for _ in range(200):  # reconnects, each stream dropped at once
        _stream(port, token).close()
    time.sleep(0.05)
    return _play(_stream(port, token), drop_at=None)


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
