"""A bot that sends the start of a gRPC message and then ends its stream (raw HTTP/2 written by
hand, no gRPC library on the bot's side): gRPC drops the incomplete message and tells the
referee only that the stream ended, so the seat forfeits as ``disconnected`` (proto/README.md
section 8 says so), the other seat wins, and the referee plays the next match as usual.  Should
a grpcio release start reporting the incomplete message, this test fails and the reason can
become ``malformed-action``."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time

from sockkit import HTTP2_PREFACE
from sockkit import h2_frame as frame
from sockkit import hpack_literal as literal

from arena.hosting import LocalSeat, MatchHost
from arena.matchrunner import resolve_bot
from arena.referee import MatchResult, RefereeConfig, TimeControl
from arena.referee.faults import Reason

HEADERS, DATA, SETTINGS = 0x1, 0x0, 0x4
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def truncated_bot(port: int, token: str) -> None:
    """Open the Play stream, then send 10 bytes of a message announced as 100, with END_STREAM."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(HTTP2_PREFACE)  # with an empty SETTINGS
        fields = [(":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play"),
                  (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
                  ("arena-token", token)]  # fmt: skip
        s.sendall(frame(HEADERS, END_HEADERS, 1, b"".join(literal(k, v) for k, v in fields)))
        time.sleep(0.3)
        s.sendall(frame(SETTINGS, ACK, 0, b""))
        s.sendall(frame(DATA, END_STREAM, 1, b"\x00" + struct.pack(">I", 100) + b"x" * 10))
        time.sleep(2.0)


def test_a_message_cut_short_by_the_end_of_the_stream_is_disconnected() -> None:
    async def run() -> tuple[MatchResult, MatchResult]:
        host = MatchHost(sandbox=None, config=RefereeConfig())
        await host.start(listen="127.0.0.1:0")
        try:
            port = int(host.server.listen_address.rsplit(":", 1)[1])
            session = host.server.session("truncated")
            threading.Thread(target=truncated_bot, args=(port, session.token), daemon=True).start()
            first = await host.play([session, LocalSeat(resolve_bot("random"))], 3, TimeControl(2.0, 2.0))
            after = await host.play(
                [LocalSeat(resolve_bot("greedy")), LocalSeat(resolve_bot("random"))], 4, TimeControl(2.0, 5.0)
            )
        finally:
            await host.close()
        return first, after

    first, after = asyncio.run(run())
    assert [(f.seat, f.reason) for f in first.forfeits] == [(0, Reason.DISCONNECTED)]
    assert first.placings == (2, 1)
    assert after.forfeits == () and after.termination in ("normal", "round-cap")
