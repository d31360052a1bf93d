"""A remote bot without gRPC: one Play stream over raw HTTP/2 on TCP (RFC 9113 frames, literal
HPACK headers), so a test controls exactly when a stream opens, what it sends and how it ends."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

from arena.v1 import arena_pb2 as pb
from tests.sockkit import HTTP2_PREFACE, frames, h2_frame, hpack_literal

# a connection window and a stream window far larger than a match needs (no WINDOW_UPDATE owed)
BIG_WINDOW = h2_frame(4, 0, 0, struct.pack(">HI", 4, 0x7FFFFFFF)) + h2_frame(
    8, 0, 0, struct.pack(">I", 2**30)
)


def open_stream(port: int, token: str, timeout: float = 10.0) -> socket.socket:
    """A connection to 127.0.0.1:``port`` with one Play stream open on ``token`` (stream 1)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    headers = [(":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play")]
    headers += [(":authority", "x"), ("content-type", "application/grpc"), ("te", "trailers")]
    block = b"".join(hpack_literal(k, v) for k, v in [*headers, ("arena-token", token)])
    sock.sendall(HTTP2_PREFACE + BIG_WINDOW + h2_frame(1, 4, 1, block))
    return sock


def messages(sock: socket.socket) -> Iterator[pb.RefereeMessage]:
    """The referee's messages on stream 1 as they arrive (PINGs and SETTINGS acknowledged), until
    the connection ends; a socket timeout or reset ends them too."""
    data = b""
    for kind, _flags, payload in frames(sock):
        if kind != 0:  # DATA
            continue
        data += payload
        while len(data) >= 5 and len(data) >= 5 + (size := int.from_bytes(data[1:5], "big")):
            message, data = pb.RefereeMessage.FromString(data[5 : 5 + size]), data[5 + size :]
            yield message


def send_message(sock: socket.socket, message: pb.BotMessage) -> None:
    """One gRPC message on stream 1."""
    body = message.SerializeToString()
    sock.sendall(h2_frame(0, 0, 1, b"\0" + struct.pack(">I", len(body)) + body))


def answer_first_legal(sock: socket.socket, request: pb.DecisionRequest) -> None:
    """Answer ``request`` with its first legal action."""
    send_message(
        sock,
        pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=request.legal_actions[0])),
    )


def send_garbage(sock: socket.socket) -> None:
    """A gRPC message whose bytes are not a BotMessage."""
    body = b"\xff\xff\xff\xff"
    sock.sendall(h2_frame(0, 0, 1, b"\0" + struct.pack(">I", len(body)) + body))


def reset_stream(sock: socket.socket) -> None:
    """RST_STREAM on stream 1 (CANCEL), the connection left open."""
    sock.sendall(h2_frame(3, 0, 1, struct.pack(">I", 8)))
