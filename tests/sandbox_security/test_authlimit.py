"""Issue 12 item 12: a brake on token guessing over TCP.

A real :class:`RefereeServer` on 127.0.0.1 and real gRPC clients.  The attacker's connections go
through a real TCP forwarder that dials the referee from another loopback address (127.0.0.2), so
the referee sees two peers on one machine: the attacker's burst of wrong tokens is cut off after
the allowed failures (then ``RESOURCE_EXHAUSTED`` with a retry-after, even for a correct token),
while a legitimate bot connecting from 127.0.0.1 plays a whole match.  Streams over the Unix
socket (the arena's own bots) are never limited.  The limiter's arithmetic (doubling lockouts,
forgetting, the table bound) is checked on its own with a controlled clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from arena.matchrunner import resolve_bot
from arena.referee import RefereeServer, TimeControl
from arena.referee.authlimit import AuthLimiter, AuthLimits, peer_address
from arena.referee.server import RETRY_AFTER_KEY, TOKEN_KEY
from arena.sandbox import BotProcess
from arena.v1 import arena_pb2 as pb

PLAY = "/arena.v1.Referee/Play"
ATTACKER = "127.0.0.2"
LIMITS = AuthLimits(failures=10, window=60.0, lockout=60.0)


def _can_bind(address: str) -> bool:
    with socket.socket() as s:
        try:
            s.bind((address, 0))
        except OSError:
            return False
    return True


needs_second_loopback = pytest.mark.skipif(
    not _can_bind(ATTACKER), reason=f"cannot bind {ATTACKER} (a second loopback address) here"
)


@contextlib.asynccontextmanager
async def forwarder(target_port: int, source: str) -> AsyncIterator[int]:
    """A TCP forwarder on 127.0.0.1: each connection to it is relayed to the referee from the
    address ``source``; yields its port."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target_port, local_addr=(source, 0))
        await asyncio.gather(pipe(client_r, server_w), pipe(server_r, client_w))

    relay = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield relay.sockets[0].getsockname()[1]
    finally:
        relay.close()


async def attempt(channel: grpc.aio.Channel, token: str) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """Open a Play stream with ``token``; (status, details, trailing metadata) of its refusal, or
    OK and the first message's kind when the referee accepted it."""
    call = channel.stream_stream(PLAY, pb.BotMessage.SerializeToString, pb.RefereeMessage.FromString)(
        metadata=((TOKEN_KEY, token),)
    )
    try:
        message = await asyncio.wait_for(call.read(), 10)
    except grpc.aio.AioRpcError as exc:
        trailer = {k: v for k, v in (exc.trailing_metadata() or ()) if isinstance(v, str)}
        return exc.code(), exc.details() or "", trailer
    finally:
        call.cancel()
    return grpc.StatusCode.OK, str(message.WhichOneof("message")), {}


@needs_second_loopback
def test_a_burst_of_wrong_tokens_is_cut_off_and_a_legitimate_bot_still_plays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="arena.referee.authlimit")

    async def main() -> dict[str, object]:
        server = RefereeServer(auth_limits=LIMITS)
        address = await server.start("127.0.0.1:0")
        port = int(address.rsplit(":", 1)[1])
        victim = server.session("victim")
        out: dict[str, object] = {}
        try:
            async with (
                forwarder(port, ATTACKER) as relay,
                grpc.aio.insecure_channel(f"127.0.0.1:{relay}") as ch,
            ):
                codes: list[grpc.StatusCode] = []
                times: list[float] = []
                trailers: list[dict[str, str]] = []
                details: list[str] = []
                started = time.monotonic()
                for i in range(300):  # as fast as one client goes
                    code, detail, trailer = await attempt(ch, f"at_guess-{i:04d}-{'x' * 20}")
                    codes.append(code)
                    times.append(time.monotonic() - started)
                    trailers.append(trailer)
                    details.append(detail)
                out.update(codes=codes, times=times, trailers=trailers, details=details)
                # the right token from the locked-out address is refused as well
                out["right_token"] = await attempt(ch, victim.token)
            # meanwhile a legitimate bot from 127.0.0.1 plays a whole match (two real processes)
            sessions = [server.session("greedy"), server.session("random")]
            procs = [BotProcess(s.name, resolve_bot(s.name).command, log_dir=tmp_path) for s in sessions]
            for proc, session in zip(procs, sessions, strict=True):
                await proc.start(address, session.token)
            try:
                out["result"] = await server.play(sessions, 3, TimeControl(2.0, 5.0))
            finally:
                for proc in procs:
                    await proc.stop(grace=0.5)
            out["victim_token"] = victim.token
        finally:
            await server.stop(0.2)
        return out

    out = asyncio.run(main())
    codes = out["codes"]
    assert isinstance(codes, list)
    unauth = [i for i, c in enumerate(codes) if c == grpc.StatusCode.UNAUTHENTICATED]
    exhausted = [i for i, c in enumerate(codes) if c == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert unauth == list(range(LIMITS.failures)), codes  # only the first 10 guesses were judged
    assert exhausted == list(range(LIMITS.failures, 300)), codes
    details, trailers, times = out["details"], out["trailers"], out["times"]
    assert isinstance(details, list) and isinstance(trailers, list) and isinstance(times, list)
    assert "further attempts are refused for 60 s" in details[LIMITS.failures - 1]
    assert "retry after" in details[-1] and 0 < int(trailers[-1][RETRY_AFTER_KEY]) <= 60
    judged_rate = LIMITS.failures / times[LIMITS.failures - 1]
    after = (300 - LIMITS.failures) / (times[-1] - times[LIMITS.failures - 1])
    print(
        f"\nguesses judged: {LIMITS.failures} at {judged_rate:.0f}/s, then 0 of {300 - LIMITS.failures} "
        f"attempts at {after:.0f}/s (all RESOURCE_EXHAUSTED, retry-after {trailers[-1][RETRY_AFTER_KEY]} s)"
    )
    assert out["right_token"][0] == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[index]
    result = out["result"]
    assert not result.forfeits, result.forfeits  # type: ignore[attr-defined]
    # every failure is logged with the peer, the lockout once; the tokens never
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert text.count(f"authentication failed from {ATTACKER}") == LIMITS.failures
    assert f"locking out {ATTACKER} for 60 s after 10 failed authentications" in text
    assert f"refusing {ATTACKER}" in text
    assert "at_guess" not in text and str(out["victim_token"]) not in text
    assert "127.0.0.1" not in text  # the legitimate peer made no failure


def test_unix_socket_streams_are_never_limited(tmp_path: Path) -> None:
    """The bots the arena launches dial a Unix socket: 50 wrong tokens there are all judged."""

    async def main() -> list[grpc.StatusCode]:
        server = RefereeServer(auth_limits=AuthLimits(failures=3))
        address = await server.start(f"unix:{tmp_path / 'referee.sock'}")
        try:
            async with grpc.aio.insecure_channel(address) as ch:
                return [(await attempt(ch, f"at_wrong-{i}"))[0] for i in range(50)]
        finally:
            await server.stop(0.2)

    assert asyncio.run(main()) == [grpc.StatusCode.UNAUTHENTICATED] * 50


def test_a_missing_token_counts_as_a_failure() -> None:
    async def main() -> list[grpc.StatusCode]:
        server = RefereeServer(auth_limits=AuthLimits(failures=2))
        address = await server.start("127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(address) as ch:
                call = ch.stream_stream(PLAY, pb.BotMessage.SerializeToString, pb.RefereeMessage.FromString)
                codes = []
                for _ in range(3):
                    try:
                        await call().read()
                    except grpc.aio.AioRpcError as exc:
                        codes.append(exc.code())
                return codes
        finally:
            await server.stop(0.2)

    assert asyncio.run(main()) == [
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ]


# ---------------------------------------------------------------------- the limiter's arithmetic


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_lockouts_double_and_are_forgotten_after_a_quiet_hour() -> None:
    clock = Clock()
    limiter = AuthLimiter(
        AuthLimits(failures=3, window=60, lockout=10, max_lockout=35, forget=3600), clock=clock
    )
    peer = "203.0.113.9"
    lockouts = []
    for _ in range(4):
        results = [limiter.failure(peer, "unknown token") for _ in range(3)]
        assert results[:2] == [None, None]
        lockouts.append(results[2])
        assert limiter.locked_for(peer) == results[2]
        clock.now += (results[2] or 0) + 0.001
        assert limiter.locked_for(peer) is None
    assert lockouts == [10, 20, 35, 35]  # doubling, capped
    clock.now += 3601
    assert [limiter.failure(peer, "x") for _ in range(3)][-1] == 10  # a fresh start


def test_a_long_lockout_is_not_forgotten_the_moment_it_ends() -> None:
    """Quiet time counts from the end of the lockout, not from the failure that started it."""
    clock = Clock()
    limiter = AuthLimiter(AuthLimits(failures=1, lockout=100, max_lockout=400, forget=150), clock=clock)
    assert limiter.failure("203.0.113.7", "x") == 100
    clock.now += 101
    assert limiter.failure("203.0.113.7", "x") == 200
    clock.now += 201  # 201 s after the last failure (> forget), but only 1 s after the lockout
    assert limiter.failure("203.0.113.7", "x") == 400


def test_failures_outside_the_window_do_not_count() -> None:
    clock = Clock()
    limiter = AuthLimiter(AuthLimits(failures=3, window=60), clock=clock)
    for _ in range(10):
        assert limiter.failure("198.51.100.1", "x") is None
        clock.now += 31  # two per window at most
    assert limiter.locked_for("198.51.100.1") is None


def test_the_table_of_addresses_is_bounded_and_keeps_lockouts() -> None:
    clock = Clock()
    limiter = AuthLimiter(AuthLimits(failures=1, max_peers=100), clock=clock)
    assert limiter.failure("192.0.2.1", "x") is not None  # locked out
    for i in range(1000):
        clock.now += 0.001
        limiter.failure(f"10.0.{i // 250}.{i % 250}", "x")
    assert limiter.tracked() <= 100


def test_peer_addresses() -> None:
    assert peer_address("ipv4:127.0.0.1:5000") == "127.0.0.1"
    assert peer_address("ipv6:[2001:db8:1:2:3:4:5:6]:7") == "2001:db8:1:2::/64"  # one host, one /64
    assert peer_address("ipv6:%5B2001:db8::1%5D:7") == "2001:db8::/64"
    assert peer_address("ipv6:[::ffff:10.1.2.3]:9") == "10.1.2.3"
    assert peer_address("ipv6:[::1]:9") == "::1"
    assert peer_address("unix:/tmp/referee.sock") is None
    assert peer_address("unix:") is None
    with pytest.raises(ValueError, match="failures"):
        AuthLimits(failures=0)
