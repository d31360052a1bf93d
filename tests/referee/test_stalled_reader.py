"""A bot that stops reading its stream: it opens the Play stream with an HTTP/2 flow-control
window of a few bytes and never widens it, while it keeps answering the referee's keepalive pings
(raw HTTP/2 written by hand).  The referee's write of its first request can never complete.

The seat forfeits as ``timeout`` when its time runs out (the clock does not wait for the write),
the other seat wins, the referee plays the next match, and stopping the server is quiet: the
write still pending on that stream, failed by the server's stop, used to reach the operator as
an ERROR with a traceback of gRPC's internals (``ExecuteBatchError raised in core by servicer
method [/arena.v1.Referee/Play]``), on every ``arena match`` against such a bot, as if the
referee had crashed.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading

import pytest
from sockkit import HTTP2_PREFACE, frames
from sockkit import h2_frame as frame
from sockkit import hpack_literal as literal

from arena.hosting import LocalSeat, MatchHost
from arena.matchrunner import resolve_bot
from arena.referee import MatchResult, RefereeConfig, TimeControl
from arena.referee.faults import Reason

HEADERS, SETTINGS = 0x1, 0x4
END_HEADERS = 0x4
INITIAL_WINDOW_SIZE = 0x4


def stalled_bot(port: int, token: str, done: threading.Event) -> None:
    """Open the Play stream with a 16-byte stream window; answer pings and settings, read
    nothing else, never send a WINDOW_UPDATE; stay connected until ``done``."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(HTTP2_PREFACE[:-9] + frame(SETTINGS, 0, 0, struct.pack(">HI", INITIAL_WINDOW_SIZE, 16)))
        fields = [(":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play"),
                  (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
                  ("arena-token", token)]  # fmt: skip
        s.sendall(frame(HEADERS, END_HEADERS, 1, b"".join(literal(k, v) for k, v in fields)))
        s.settimeout(0.2)
        for _frame in frames(s, until=done):  # pings and settings answered, the rest left unread
            pass


def test_a_bot_that_stops_reading_times_out_and_the_referee_stops_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done = threading.Event()

    async def run() -> tuple[MatchResult, MatchResult]:
        host = MatchHost(sandbox=None, config=RefereeConfig())
        await host.start(listen="127.0.0.1:0")
        try:
            port = int(host.server.listen_address.rsplit(":", 1)[1])
            session = host.server.session("stalled")
            threading.Thread(target=stalled_bot, args=(port, session.token, done), daemon=True).start()
            first = await host.play([session, LocalSeat(resolve_bot("random"))], 3, TimeControl(0.5, 0.5))
            done.set()  # the bot goes away (as a bot process that the arena stops)
            after = await host.play(
                [LocalSeat(resolve_bot("greedy")), LocalSeat(resolve_bot("random"))], 4, TimeControl(2.0, 5.0)
            )
        finally:
            await host.close()
            done.set()
        return first, after

    with caplog.at_level(logging.WARNING):
        first, after = asyncio.run(run())
    assert [(f.seat, f.reason) for f in first.forfeits] == [(0, Reason.TIMEOUT)]
    assert first.placings == (2, 1)
    assert after.forfeits == () and after.termination in ("normal", "round-cap")
    loud = [r for r in caplog.records if r.name.startswith("grpc") and r.levelno >= logging.WARNING]
    assert not loud, [(r.name, r.levelname, r.getMessage()) for r in loud]
