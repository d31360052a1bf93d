#!/usr/bin/env python3
"""Opens its stream by hand over HTTP/2 with the metadata ``grpc-encoding: snappy-xx`` (no such
compression), then sends one compressed message.  gRPC's C core refuses the call at once with a
trailers-only error (status 13, RST_STREAM) but may leave the referee's side of the call open:
the referee must still see the stream end (``disconnected`` at once, not a ``timeout`` when the
move time has run out).  It then waits, connected, without answering.

No gRPC library: the HTTP/2 frames and literal (uncompressed) HPACK headers are written here."""

import os
import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADERS, DATA, SETTINGS, RST_STREAM, PING, GOAWAY, WINDOW_UPDATE = 1, 0, 4, 3, 6, 7, 8
END_HEADERS, ACK = 0x4, 0x1


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def length(value: int) -> bytes:
    """An HPACK integer with a 7-bit prefix (string lengths, Huffman off)."""
    if value < 127:
        return bytes([value])
    out, value = [127], value - 127
    while value >= 128:
        out.append((value & 127) | 128)
        value >>= 7
    return bytes([*out, value])


def literal(name: str, value: str) -> bytes:
    """A header field as a literal without indexing, new name (0x00), no Huffman coding."""
    n, v = name.encode(), value.encode()
    return b"\x00" + length(len(n)) + n + length(len(v)) + v


def connect(address: str) -> socket.socket:
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(address[len("unix:") :])
        return sock
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)))


def main() -> None:
    sock = connect(os.environ["ARENA_ADDRESS"])
    fields = [
        (":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play"),
        (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
        ("arena-token", os.environ.get("ARENA_TOKEN", "")), ("grpc-encoding", "snappy-xx"),
    ]  # fmt: skip
    block = b"".join(literal(n, v) for n, v in fields)
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_HEADERS, 1, block))
    message = b"\x0a\x00"  # a BotMessage with an empty Hello
    sock.sendall(frame(DATA, 0, 1, b"\x01" + struct.pack(">I", len(message)) + message))
    print("badencoding: stream opened with grpc-encoding snappy-xx", file=sys.stderr, flush=True)
    sock.settimeout(0.5)
    data = b""
    until = time.monotonic() + 60
    while time.monotonic() < until:  # answer the connection's SETTINGS and PINGs, log the rest
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        data += chunk
        while len(data) >= 9:
            size = int.from_bytes(data[:3], "big")
            if len(data) < 9 + size:
                break
            kind, flags, payload = data[3], data[4], data[9 : 9 + size]
            data = data[9 + size :]
            if kind == SETTINGS and not flags & ACK:
                sock.sendall(frame(SETTINGS, ACK, 0, b""))
            elif kind == PING and not flags & ACK:
                sock.sendall(frame(PING, ACK, 0, payload))
            elif kind in (HEADERS, RST_STREAM, GOAWAY):
                print(f"badencoding: frame {kind}: {payload[:120]!r}", file=sys.stderr, flush=True)
    print("badencoding: done waiting", file=sys.stderr, flush=True)


main()
