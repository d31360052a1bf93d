#!/usr/bin/env python3
"""Tries to reach the network before it plays: TCP to the host's own services on 127.0.0.1
(PostgreSQL's 5432 and any port the test listens on), TCP to the host's other addresses and to
public ones, UDP and DNS to public resolvers, and a host process's abstract Unix socket (which
ignores the file system).  Logs each result on stderr (see _common.attempt), then plays greedily.

The targets come from ARENA_TEST_NET_TARGETS (comma-separated ``tcp:HOST:PORT``,
``udp:HOST:PORT``, ``dns:NAME``, ``unix:@NAME``), default: PostgreSQL on loopback, two public
addresses, a public resolver and a DNS name.  Inside the sandbox every attempt must fail."""

import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import attempt

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run

DEFAULT_TARGETS = "tcp:127.0.0.1:5432,tcp:1.1.1.1:443,tcp:8.8.8.8:53,udp:8.8.8.8:53,dns:example.com"
TIMEOUT = 1.5  # seconds per attempt (an empty network namespace answers at once)


def _tcp(host, port):
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as s:
        return f"connected from {s.getsockname()}"


def _udp(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        s.connect((host, int(port)))
        s.send(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01")
        return f"sent {s.recv(512)[:2]!r}... and got an answer"


def _dns(name):
    return sorted({a[4][0] for a in socket.getaddrinfo(name, 443, proto=socket.IPPROTO_TCP)})


def _abstract(name):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(TIMEOUT)
        s.connect("\0" + name)
        return "connected"


def probe(target):
    kind, _, rest = target.partition(":")
    if kind == "tcp":
        host, _, port = rest.rpartition(":")
        return lambda: _tcp(host, port)
    if kind == "udp":
        host, _, port = rest.rpartition(":")
        return lambda: _udp(host, port)
    if kind == "dns":
        return lambda: _dns(rest)
    if kind == "unix":
        return lambda: _abstract(rest.removeprefix("@"))
    raise SystemExit(f"netprobe: unknown target {target!r}")


class NetProbeBot(Bot):
    name = "netprobe"

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()

    def choose(self, state, legal):
        return self.policy.choose(state)


if __name__ == "__main__":
    targets = [t for t in os.environ.get("ARENA_TEST_NET_TARGETS", DEFAULT_TARGETS).split(",") if t]
    print(f"netprobe: interfaces {[n for _, n in socket.if_nameindex()]}", file=sys.stderr, flush=True)
    for t in targets:
        attempt("netprobe", t, probe(t))
    print(f"netprobe: {len(targets)} attempts made; now playing", file=sys.stderr, flush=True)
    run(NetProbeBot())
