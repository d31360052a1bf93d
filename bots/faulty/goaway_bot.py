#!/usr/bin/env python3
"""Opens its stream by hand over HTTP/2, then sends the referee a GOAWAY whose debug text is
terminal escape sequences (a window title, red background, a screen clear).  gRPC's C core
logged that text raw to the standard error of the ``arena`` process, so a bot could write to the
terminal of whoever ran it.  The referee must keep its log quiet (``GRPC_VERBOSITY=NONE``) and
judge the bot as for any silence: it never answers, so it forfeits by ``timeout``.

No gRPC library: the HTTP/2 frames and literal (uncompressed) HPACK headers are written here,
as in ``badencoding_bot.py``, not shared with it: a registered bot is one file, and this one is
also played in a tournament (``tests/adversarial/test_terminal_injection.py``)."""

import os
import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADERS, SETTINGS, PING, GOAWAY = 1, 4, 6, 7
END_HEADERS, ACK = 0x4, 0x1
ESCAPES = b"\x1b]0;PWNED-BY-A-BOT\x07\x1b[41mINJECTED\x1b[2J\x1b[0m"


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name: str, value: str) -> bytes:
    """A header field as a literal without indexing, new name, no Huffman coding (short ones)."""
    n, v = name.encode(), value.encode()
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


def main() -> None:
    address = os.environ["ARENA_ADDRESS"]
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(address[len("unix:") :])
    else:
        host, port = address.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
    fields = [
        (":method", "POST"), (":scheme", "http"), (":path", "/arena.v1.Referee/Play"),
        (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
        ("arena-token", os.environ.get("ARENA_TOKEN", "")),
    ]  # fmt: skip
    block = b"".join(literal(n, v) for n, v in fields)
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_HEADERS, 1, block))
    sock.sendall(frame(GOAWAY, 0, 0, struct.pack(">II", 1, 2) + ESCAPES))  # INTERNAL_ERROR, escapes
    print("goaway: sent a GOAWAY with escape sequences as its debug text", file=sys.stderr, flush=True)
    sock.settimeout(0.5)
    data = b""
    until = time.monotonic() + 60
    while time.monotonic() < until:  # answer SETTINGS and PINGs; never a request
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        data += chunk
        while len(data) >= 9 and len(data) >= 9 + int.from_bytes(data[:3], "big"):
            size = int.from_bytes(data[:3], "big")
            kind, flags, payload = data[3], data[4], data[9 : 9 + size]
            data = data[9 + size :]
            if kind == SETTINGS and not flags & ACK:
                sock.sendall(frame(SETTINGS, ACK, 0, b""))
            elif kind == PING and not flags & ACK:
                sock.sendall(frame(PING, ACK, 0, payload))


main()
