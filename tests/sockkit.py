"""Raw-socket helpers for the tests that check how a server treats connections."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator

HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""A client's HTTP/2 connection preface followed by an empty SETTINGS frame."""


def read_until_closed(sock: socket.socket, wait: float = 15.0) -> tuple[float, bytes]:
    """Read from ``sock`` until the server closes it (or resets it): (seconds it took, the bytes
    received); AssertionError when it is still open after ``wait`` seconds."""
    sock.settimeout(wait)
    start = time.monotonic()
    data = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            raise AssertionError(f"the connection was still open after {wait} s; got {data!r}") from None
        except ConnectionResetError:
            return time.monotonic() - start, data
        if not chunk:
            return time.monotonic() - start, data
        data += chunk


def h2_frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    """One HTTP/2 frame (RFC 9113 4.1): 24-bit length, type, flags, stream id, payload."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(name: str, value: str) -> bytes:
    """An HPACK header field, literal without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    n, v = name.encode(), value.encode()
    assert len(n) < 127 and len(v) < 127
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


def frames(sock: socket.socket, until: threading.Event | None = None) -> Iterator[tuple[int, int, bytes]]:
    """The server's HTTP/2 frames on ``sock`` as ``(type, flags, payload)``, PINGs and SETTINGS
    acknowledged as they come (so the server keeps the connection), until the connection ends or
    fails.  With ``until``, a socket timeout only checks it: the frames end once it is set."""
    buf = b""
    while until is None or not until.is_set():
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            if until is None:
                return
            continue
        except OSError:
            return
        if not chunk:
            return
        buf += chunk
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            size, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            payload, buf = buf[9 : 9 + size], buf[9 + size :]
            if kind == 6 and not flags & 1:  # PING, not an ACK
                sock.sendall(h2_frame(6, 1, 0, payload))
            elif kind == 4 and not flags & 1:  # SETTINGS, not an ACK
                sock.sendall(h2_frame(4, 1, 0, b""))
            yield kind, flags, payload
