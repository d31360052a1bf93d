"""Deliberately hostile bots (bots/faulty/README.md) against the real sandbox and the real referee.

Each test plays one hostile bot against the greedy sample bot through ``play_local_match`` with
the sandbox on (small limits: 256 MiB, 32 processes, 20 s of CPU), on the module's ONE shared
referee, and then checks:

* the match completed and its replay verifies through the engine;
* the offender got its expected termination (the table below), or, for the bots that only try
  to break out, that it was not forfeited and its own stderr log shows every attempt failing;
* the other bot was unaffected: not forfeited, first in the 2-player game when the offender was;
* nothing survived: no process with the match's tokens or the referee's socket directory on its
  command line, no orphan, every bot cgroup removed;
* the CPU time of every bot was recorded and is plausible;
* the same referee then plays a normal match.

Expected terminations (and why):

==========  ================================================================================
forkbomb    ``timeout``: the process limit (pids cgroup) stops the bomb; the bot never answers
            (``crashed`` also passes: its runtime may die of not getting a thread)
memhog      ``crashed``: the memory cgroup's OOM killer ends it (long move time, so the kill
            and not the clock decides)
spinner     ``timeout``, with about its time budget's worth of CPU recorded
flood       ``malformed-action``: over 64 messages that answer nothing
bigmsg      ``malformed-action``: a 100 MB message is over the 64 KiB receive limit
badbytes    ``malformed-action``: bytes that are not a BotMessage
reopen      ``disconnected``: its new stream with the same token gets only a goodbye
netprobe    no forfeit; every network attempt logged as BLOCKED
snoop       no forfeit; every read/write/tamper attempt logged as BLOCKED
escaper     no forfeit; its setsid() grandchild is dead after the match, its marker unwritten
retoken     no forfeit; its second stream on its own token is refused (PERMISSION_DENIED)
impostor    no forfeit; another seat's token is refused (PERMISSION_DENIED), so is a made-up one
stale       no forfeit; answers to old request ids are dropped
==========  ================================================================================

Controls (the same attacks without the sandbox) show that the checks can fail: there the network
attempts reach the test's listeners, the snoop reads the secret and finds the other bot's token,
and the escaper's grandchild survives the match and writes its marker.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.engine import replay
from arena.referee import Reason, TimeControl
from arena.sandbox import SandboxLimits
from arena.store.db import Database

from .conftest import LIMITS, Played, SharedReferee
from .helpers import BOTS, attempts, cgroups_available, kill_all, processes_with, reap_children, wait_gone

FAST = TimeControl(move_time=0.5, bank=0.5)  # a timeout costs 1 s
FAULT_AT = "15"  # in 2-player games: past the 12 setup placements, in the middle of the game
NCPU = os.cpu_count() or 1

needs_cgroups = pytest.mark.skipif(cgroups_available() is not None, reason=str(cgroups_available()))


# ---------------------------------------------------------------------- common checks


def check_match(played: Played, seat: int, expect: tuple[Reason, ...] | None) -> None:
    """The match completed and verifies; the offender in ``seat`` ended as expected (``None``:
    not forfeited at all); the other seat was unaffected; CPU times are recorded and plausible."""
    result = played.result
    rep = replay(result.replay)  # raises unless every event re-applies through the engine
    assert rep.result["scores"] == list(result.scores)
    assert rep.result["placings"] == list(result.placings)
    bad, good = result.seats[seat], result.seats[1 - seat]
    assert good.detail == "" and good.termination in ("normal", "round-cap", "forfeit"), good
    assert all(f.seat == seat for f in result.forfeits), result.forfeits
    if expect is None:
        assert result.forfeits == (), result.forfeits
        assert result.termination in ("normal", "round-cap")
        assert bad.termination == good.termination == result.termination
        assert bad.decisions > 12 and good.decisions > 12  # both played the whole game
        assert "forfeits" not in rep.result
    else:
        assert bad.termination in {str(r) for r in expect}, (bad.termination, bad.detail)
        assert [f.seat for f in result.forfeits] == [seat]
        assert rep.result["forfeits"][0]["reason"] == bad.termination
        assert bad.placing == 2 and good.placing == 1
        assert good.termination == "forfeit"  # the game stopped early: nobody left to play
        assert result.termination == "forfeit"
    for s in result.seats:
        if played.cgroups.created:  # the whole tree's CPU, from the cgroup
            assert s.cpu_time is not None, s
        if s.cpu_time is not None:
            assert 0.0 <= s.cpu_time <= result.duration * NCPU + 0.5, (s, result.duration)
    if played.cgroups.created:
        assert len(played.cgroups.created) == 2  # one per bot


def then_a_normal_match(shared: SharedReferee, log_dir: Path) -> None:
    """The same referee plays a normal sandboxed match after the hostile one."""
    played = shared.play(["greedy", "greedy"], log_dir=log_dir, control=FAST, seed=77)
    result = played.result
    assert result.forfeits == ()
    assert result.termination in ("normal", "round-cap")
    assert all(s.termination == result.termination for s in result.seats)
    replay(result.replay)
    shared.assert_clean(played)


def hostile(
    shared: SharedReferee,
    tmp_path: Path,
    bot: str,
    *,
    seat: int,
    expect: tuple[Reason, ...] | None,
    control: TimeControl = FAST,
    env: dict[str, str] | None = None,
    limits: SandboxLimits = LIMITS,
    seed: int = 4242,
) -> Played:
    """``bot`` in ``seat`` against greedy in the other seat, every check above."""
    names = ["greedy", "greedy"]
    names[seat] = bot
    envs: list[dict[str, str]] = [{}, {}]
    envs[seat] = {"FAULT_AT": FAULT_AT, **(env or {})}
    played = shared.play(
        names, log_dir=tmp_path / "logs", control=control, env=envs, sandbox=limits, seed=seed
    )
    check_match(played, seat, expect)
    shared.assert_clean(played)
    then_a_normal_match(shared, tmp_path / "logs")
    s = played.result.seats[seat]
    evidence = played.result.forfeits[0].evidence if played.result.forfeits else {}
    print(  # shown with -s: what each attack came to
        f"\n[{bot}] {s.termination}: {s.detail or '-'} | cpu {s.cpu_time} s | decisions {s.decisions} | "
        f"evidence {sorted(evidence)} | match {played.result.duration:.2f} s"
    )
    return played


def blocked_attempts(played: Played, seat: int, bot: str, expected_labels: list[str]) -> list[str]:
    """Every attempt the bot logged failed, and it logged exactly ``expected_labels``; returns
    the log lines (for the report)."""
    log = played.stderr(seat)
    found = attempts(log, bot)
    assert [a.label for a in found] == expected_labels, log
    succeeded = [a for a in found if not a.blocked]
    assert not succeeded, f"attacks that worked in the sandbox: {succeeded}\n{log}"
    assert f"{len(expected_labels)} attempts made" in log, log
    return [f"{a.label}: {a.rest}" for a in found]


# ---------------------------------------------------------------------- resource attacks


@needs_cgroups
def test_fork_bomb(shared_referee: SharedReferee, tmp_path: Path) -> None:
    # 3 s to move: time for the bomb's interpreter to start and hit the limit on a busy machine
    control = TimeControl(move_time=3.0, bank=0.0)
    played = hostile(
        shared_referee,
        tmp_path,
        "forkbomb_bot.py",
        seat=1,
        expect=(Reason.TIMEOUT, Reason.CRASHED),
        control=control,
    )
    log = played.stderr(1)
    assert "forkbomb: forking forever" in log
    # the bomb hit the process limit: fork failed after fewer children than the limit allows
    line = next(x for x in log.splitlines() if "fork failed after" in x)
    made = int(line.split("fork failed after ")[1].split()[0])
    assert made < LIMITS.processes, line
    assert "Resource temporarily unavailable" in line


@needs_cgroups
def test_memory_hog(shared_referee: SharedReferee, tmp_path: Path) -> None:
    # a long move time: the memory cgroup's OOM kill, not the clock, must end it
    played = hostile(
        shared_referee,
        tmp_path,
        "memhog_bot.py",
        seat=0,
        expect=(Reason.CRASHED,),
        control=TimeControl(move_time=20.0, bank=0.0),
    )
    forfeit = played.result.forfeits[0]
    assert "SIGKILL" in forfeit.detail or "status 137" in forfeit.detail, forfeit.detail
    # said as what it was: the kernel's out-of-memory kill at the sandbox's limit
    assert f"out of memory, the sandbox's limit of {LIMITS.memory_mb} MiB reached" in forfeit.detail
    held = [int(x.split("holding ")[1].split()[0]) for x in played.stderr(0).splitlines() if "holding" in x]
    assert held, played.stderr(0)
    assert max(held) <= LIMITS.memory_mb, held  # it never held more than its limit


@needs_cgroups
def test_cpu_spin(shared_referee: SharedReferee, tmp_path: Path) -> None:
    control = TimeControl(move_time=1.0, bank=1.0)
    played = hostile(
        shared_referee, tmp_path, "spinner_bot.py", seat=1, expect=(Reason.TIMEOUT,), control=control
    )
    budget = control.move_time + control.bank
    spinner, greedy = played.result.seats[1], played.result.seats[0]
    assert spinner.cpu_time is not None and greedy.cpu_time is not None
    # about its time budget's worth of CPU on an idle machine; a busy one gives it less than a
    # whole core, so the bound below is loose (it is the ratio to greedy's that says "spinning")
    assert 0.1 * budget <= spinner.cpu_time <= played.result.duration + 0.5, spinner
    assert spinner.cpu_time > 5 * greedy.cpu_time, (spinner, greedy)
    assert "no answer after" in spinner.detail


@needs_cgroups
def test_cpu_rlimit_ends_a_spinner(shared_referee: SharedReferee, tmp_path: Path) -> None:
    """With 2 s of CPU allowed and 60 s to move, the kernel (RLIMIT_CPU), not the clock, ends it."""
    limits = SandboxLimits(cpu_seconds=2, memory_mb=256, processes=32)
    played = hostile(
        shared_referee,
        tmp_path,
        "spinner_bot.py",
        seat=0,
        expect=(Reason.CRASHED,),
        control=TimeControl(move_time=60.0, bank=0.0),
        limits=limits,
    )
    spinner = played.result.seats[0]
    assert played.result.duration < 30
    # killed at 2 s of CPU (SIGKILL: soft = hard limit), part of which went into starting up
    assert spinner.cpu_time is not None and 1.0 <= spinner.cpu_time <= 4.0, spinner


# ---------------------------------------------------------------------- protocol attacks


def test_flood(shared_referee: SharedReferee, tmp_path: Path) -> None:
    played = hostile(shared_referee, tmp_path, "flood_bot.py", seat=0, expect=(Reason.MALFORMED_ACTION,))
    bad = played.result.seats[0]
    assert "flooded the stream" in bad.detail
    assert bad.decisions == int(FAULT_AT) - 1  # caught at the decision it flooded


def test_a_call_grpc_refuses_below_the_referee_ends_the_stream(
    shared_referee: SharedReferee, tmp_path: Path
) -> None:
    """A stream opened with an unknown grpc-encoding: C-core answers it with a trailers-only
    error and may leave the request stream open under the referee; the seat is ``disconnected``
    at once (it used to wait out its move time and forfeit on ``timeout``)."""
    control = TimeControl(move_time=30.0, bank=0.0)
    played = hostile(
        shared_referee, tmp_path, "badencoding_bot.py", seat=1, expect=(Reason.DISCONNECTED,), control=control
    )
    assert played.result.duration < 10, played.result.duration
    assert "stream opened with grpc-encoding snappy-xx" in played.stderr(1)
    assert "the stream ended" in played.result.seats[1].detail, played.result.seats[1].detail


def test_hundred_megabyte_message(shared_referee: SharedReferee, tmp_path: Path) -> None:
    limits = SandboxLimits(cpu_seconds=20, memory_mb=512, processes=32)  # room for the 100 MB
    played = hostile(
        shared_referee, tmp_path, "bigmsg_bot.py", seat=1, expect=(Reason.MALFORMED_ACTION,), limits=limits
    )
    bad = played.result.seats[1]
    # over the 4 MiB transport limit: gRPC refuses it unread, and the referee notices the refusal
    assert "transport refused" in bad.detail, bad.detail
    assert "bigmsg: sending 1000000" in played.stderr(1)


def test_invalid_protobuf(shared_referee: SharedReferee, tmp_path: Path) -> None:
    played = hostile(shared_referee, tmp_path, "badbytes_bot.py", seat=0, expect=(Reason.MALFORMED_ACTION,))
    bad = played.result.seats[0]
    assert "not a BotMessage" in bad.detail, bad.detail
    assert bad.decisions == int(FAULT_AT) - 1


def test_close_and_reopen(shared_referee: SharedReferee, tmp_path: Path) -> None:
    played = hostile(shared_referee, tmp_path, "reopen_bot.py", seat=1, expect=(Reason.DISCONNECTED,))
    log = played.stderr(1)
    assert "reopen: closed the first stream" in log
    second = [x for x in log.splitlines() if x.startswith("reopen: second stream")]
    assert second, log
    # the new stream never got the seat back: no welcome, no request; a goodbye or a refusal
    assert not any("got a welcome" in x or "got a request" in x for x in second), second
    assert any("goodbye" in x or "refused" in x for x in second), second


def test_second_stream_on_own_token(shared_referee: SharedReferee, tmp_path: Path) -> None:
    played = hostile(shared_referee, tmp_path, "retoken_bot.py", seat=0, expect=None)
    log = played.stderr(0)
    assert "retoken: second stream: BLOCKED PERMISSION_DENIED" in log, log
    assert "SUCCEEDED" not in log


def test_another_seats_token(shared_referee: SharedReferee, tmp_path: Path) -> None:
    played = hostile(
        shared_referee, tmp_path, "impostor_bot.py", seat=1, expect=None, env={"ARENA_PEER_TOKEN": "{token0}"}
    )
    log = played.stderr(1)
    assert "impostor: peer-token: PERMISSION_DENIED" in log, log
    assert "impostor: made-up-token: UNAUTHENTICATED" in log, log
    assert "got a message" not in log


def test_stale_request_ids(shared_referee: SharedReferee, tmp_path: Path) -> None:
    played = hostile(shared_referee, tmp_path, "stale_bot.py", seat=0, expect=None)
    assert played.result.seats[0].decisions > 12


# ---------------------------------------------------------------------- break-out attempts


@pytest.fixture
def listeners() -> Iterator[tuple[int, str, str]]:
    """A TCP listener on every interface of the host and an abstract Unix socket: what a bot
    outside the sandbox can reach.  Yields (port, the host's non-loopback address, abstract name)."""
    tcp = socket.socket()
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("0.0.0.0", 0))
    tcp.listen(16)
    abstract = f"arena-adv-{os.getpid()}-{time.monotonic_ns()}"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind("\0" + abstract)
    unix.listen(16)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the route
            host = probe.getsockname()[0]
        except OSError:
            host = "127.0.0.1"
    yield tcp.getsockname()[1], host, abstract
    tcp.close()
    unix.close()


def net_targets(port: int, host: str, abstract: str) -> list[str]:
    return [
        "tcp:127.0.0.1:5432",  # the host's PostgreSQL
        f"tcp:127.0.0.1:{port}",  # a host service on loopback
        f"tcp:{host}:{port}",  # the same service on the host's own address
        "tcp:1.1.1.1:443",  # the internet
        "tcp:8.8.8.8:53",
        "udp:8.8.8.8:53",
        "dns:example.com",
        f"unix:@{abstract}",  # an abstract Unix socket: no file system path to hide
    ]


def test_network_is_unreachable(
    shared_referee: SharedReferee, tmp_path: Path, listeners: tuple[int, str, str]
) -> None:
    targets = net_targets(*listeners)
    played = hostile(
        shared_referee,
        tmp_path,
        "netprobe_bot.py",
        seat=1,
        expect=None,
        env={"ARENA_TEST_NET_TARGETS": ",".join(targets)},
    )
    blocked_attempts(played, 1, "netprobe", targets)
    assert "netprobe: interfaces ['lo']" in played.stderr(1)  # nothing but its own loopback


def test_network_control_without_sandbox(
    shared_referee: SharedReferee, tmp_path: Path, listeners: tuple[int, str, str]
) -> None:
    """The same probe unsandboxed reaches the test's own listeners: the check above can fail."""
    port, host, abstract = listeners
    targets = [f"tcp:127.0.0.1:{port}", f"tcp:{host}:{port}", f"unix:@{abstract}"]
    played = shared_referee.play(
        ["netprobe_bot.py", "greedy"],
        log_dir=tmp_path / "logs",
        control=FAST,
        env=[{"ARENA_TEST_NET_TARGETS": ",".join(targets)}, {}],
        sandbox=None,
    )
    check_match(played, 0, None)
    found = attempts(played.stderr(0), "netprobe")
    assert [a.label for a in found] == targets
    assert all(not a.blocked for a in found), found
    shared_referee.assert_clean(played)


def snoop_env(tmp_path: Path, shared: SharedReferee | None) -> tuple[dict[str, str], list[str], Path]:
    """Secrets for the snoop bot to go after: another bot's file, a real database with a row in
    it, the shared referee's socket directory; a host folder to write into."""
    db_path = tmp_path / "home" / "arena.db"
    db_path.parent.mkdir(parents=True)
    Database(f"sqlite:///{db_path}").close()
    secrets = [str(BOTS / "greedy_bot.py"), str(db_path)]
    if shared is not None:
        secrets.append(str(shared.sock_dir / "referee.sock"))
    outside = tmp_path / "outside"
    outside.mkdir()
    env = {
        "ARENA_TEST_SECRET_PATHS": os.pathsep.join(secrets),
        "ARENA_TEST_SIGNAL_PID": str(os.getpid()),
        "ARENA_TEST_TMP_NAME": f"snoop-{tmp_path.name}",
    }
    return env, secrets, outside


def test_files_are_out_of_reach(shared_referee: SharedReferee, tmp_path: Path) -> None:
    env, secrets, outside = snoop_env(tmp_path, shared_referee)
    own_dir = BOTS / "faulty"
    writes = [
        str(own_dir / "snoop-was-here"),  # its own directory (read-only)
        "/usr/snoop-was-here",
        "/run/arena/snoop-was-here",  # the referee's socket directory, shared by every bot
        str(outside / "snoop-was-here"),  # any host folder
    ]
    env["ARENA_TEST_WRITE_PATHS"] = os.pathsep.join(writes)
    played = hostile(shared_referee, tmp_path, "snoop_bot.py", seat=0, expect=None, env=env)
    socket_path = "/run/arena/referee.sock"
    labels = [
        *(f"read:{p}" for p in secrets),
        *(f"write:{p}" for p in writes),
        f"chmod:{socket_path}",
        f"unlink:{socket_path}",
        "tokens:/proc",
        f"signal:{os.getpid()}",
    ]
    blocked_attempts(played, 0, "snoop", labels)
    # nothing was written anywhere on the host, and the referee's socket is intact
    for p in [own_dir / "snoop-was-here", Path("/usr/snoop-was-here"), outside / "snoop-was-here"]:
        assert not p.exists(), p
    assert not (shared_referee.sock_dir / "snoop-was-here").exists()
    assert (shared_referee.sock_dir / "referee.sock").is_socket()
    assert not (Path("/tmp") / f"snoop-{tmp_path.name}").exists()  # its /tmp was private
    assert "private tmp file" in played.stderr(0)


def test_files_control_without_sandbox(shared_referee: SharedReferee, tmp_path: Path) -> None:
    """Unsandboxed (on a referee of its own: it unlinks the socket it dialled) the snoop reads
    the secrets, writes the host folder and finds the other bot's token in /proc."""
    env, secrets, outside = snoop_env(tmp_path, None)
    env["ARENA_TEST_WRITE_PATHS"] = str(outside / "snoop-was-here")
    played = shared_referee.play(
        ["snoop_bot.py", "greedy"],
        log_dir=tmp_path / "logs",
        control=FAST,
        env=[env, {}],
        sandbox=None,
        shared=False,
    )
    check_match(played, 0, None)
    found = {a.label: a for a in attempts(played.stderr(0), "snoop")}
    for p in secrets:
        assert not found[f"read:{p}"].blocked, found
    assert not found[f"write:{outside / 'snoop-was-here'}"].blocked
    assert (outside / "snoop-was-here").exists()
    assert not found["tokens:/proc"].blocked, found  # the greedy bot's token is in its environment
    (Path("/tmp") / f"snoop-{tmp_path.name}").unlink(missing_ok=True)
    shared_referee.assert_clean(played)


def test_setsid_grandchild_dies_with_the_match(shared_referee: SharedReferee, tmp_path: Path) -> None:
    (tmp_path / "escape").mkdir()
    marker = tmp_path / "escape" / "marker"
    sleep = 3.0
    started = time.monotonic()
    played = hostile(
        shared_referee,
        tmp_path,
        "escaper_bot.py",
        seat=1,
        expect=None,
        env={"ARENA_TEST_MARKER": str(marker), "ESCAPER_SLEEP": str(sleep)},
    )
    log = played.stderr(1)
    assert "own session" in log, log  # the grandchild did start, in a session of its own
    assert f"escaper: marker:{marker} (at once): BLOCKED" in log, log
    # (hostile() already checked that no process with the match's tokens is left)
    time.sleep(max(0.0, started + sleep + 1.0 - time.monotonic()))  # past its wake-up time
    assert not marker.exists(), marker.read_text()
    assert "after sleeping" not in played.stderr(1)


def test_escaper_control_without_sandbox(shared_referee: SharedReferee, tmp_path: Path) -> None:
    """Unsandboxed, the setsid() grandchild escapes the process-group kill and reaches the host
    path (control: the marker check above can fail), but not past its match: the bot's guard, its
    child subreaper, kills it with the bot (found by its token in its environment)."""
    (tmp_path / "escape").mkdir()
    marker = tmp_path / "escape" / "marker"
    played = shared_referee.play(
        ["escaper_bot.py", "greedy"],
        log_dir=tmp_path / "logs",
        control=FAST,
        env=[{"ARENA_TEST_MARKER": str(marker), "ESCAPER_SLEEP": "30"}, {}],
        sandbox=None,
    )
    try:
        check_match(played, 0, None)
        assert marker.exists()  # it reached the host path
        assert "own session" in played.stderr(0)  # the grandchild did start
        assert not wait_gone(played.markers(), timeout=5.0), "the grandchild outlived its match"
    finally:
        kill_all(processes_with(played.markers()))
        assert not wait_gone(played.markers(), timeout=5.0)
        reap_children()


def test_the_shared_referee_served_every_match(shared_referee: SharedReferee, tmp_path: Path) -> None:
    """The one referee that the module's hostile matches ran on (all of them, some or none: this
    test holds alone and in any order) still plays a normal match and reports itself healthy."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    before = shared_referee.matches
    then_a_normal_match(shared_referee, tmp_path / "logs")
    assert shared_referee.matches == before + 1

    async def check() -> int:
        async with grpc.aio.insecure_channel(shared_referee.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = await stub.Check(health_pb2.HealthCheckRequest(service="arena.v1.Referee"), timeout=5)
            return int(reply.status)

    assert shared_referee.loop.run_until_complete(check()) == health_pb2.HealthCheckResponse.SERVING
