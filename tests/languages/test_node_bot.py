"""The JavaScript sample bot (bots/node/bot.js) against the Python bots: real node processes,
real gRPC (grpc-js) over a Unix socket and over TCP, replays verified by the engine."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.engine import replay, scores
from arena.matchrunner import BotSpec, play_local_match, resolve_bot
from arena.referee import MatchResult, Reason, RefereeServer, TimeControl
from arena.sandbox import BotProcess, launch_command

from .conftest import GREEDY, NODE_DIR, ROOT

CONTROL = TimeControl(move_time=2.0, bank=10.0)  # generous: the machine is shared


def check_clean(result: MatchResult, names: list[str]) -> None:
    """Played to the end by every seat, no forfeit, and the replay verifies through the engine."""
    assert result.forfeits == (), result.forfeits
    assert result.termination in ("normal", "round-cap")
    assert [s.name for s in result.seats] == names
    for seat in result.seats:
        assert seat.termination == result.termination, (seat.seat, seat.termination, seat.detail)
        assert seat.decisions > 0, f"seat {seat.seat} ({seat.name}) never decided"
    rep = replay(result.replay)  # raises ReplayError when any event does not replay exactly
    assert list(scores(rep.final)) == list(result.scores)
    assert rep.result["termination"] == result.termination


def test_launch_command_runs_bot_js_under_node(node_bot: Path) -> None:
    command = launch_command(node_bot)
    assert command[-1] == str(node_bot)
    assert "node" in Path(command[0]).name or command[:2] == ["/usr/bin/env", "node"]
    spec = resolve_bot(str(node_bot))
    assert spec.command == tuple(command)


@pytest.mark.parametrize(
    ("seats", "seed"),
    [(["node", "greedy"], 21), (["greedy", "node", "greedy", "node"], 22)],
    ids=["2p", "4p"],
)
def test_node_bot_plays_greedy_to_the_end(node_bot: Path, seats: list[str], seed: int) -> None:
    paths = {"node": node_bot, "greedy": GREEDY}
    specs = [BotSpec(f"{kind}{k}", tuple(launch_command(paths[kind]))) for k, kind in enumerate(seats)]
    with tempfile.TemporaryDirectory() as logs:
        result = asyncio.run(play_local_match(specs, seed, CONTROL, log_dir=Path(logs)))
        check_clean(result, [s.name for s in specs])
        for k, kind in enumerate(seats):  # the Node bot wrote nothing to stderr: no error
            if kind == "node":
                assert (Path(logs) / f"match-seat{k}-{specs[k].name}.stderr.log").read_text() == ""


def test_node_bot_kept_running_plays_two_matches_on_one_process(node_bot: Path) -> None:
    """Persistent sessions over TCP: one node process plays two matches (a new stream for each),
    then the referee revokes the token and the bot exits by itself with status 0 on the Goodbye."""

    async def scenario() -> tuple[list[MatchResult], list[int], list[int | None]]:
        server = RefereeServer()
        address = await server.start("127.0.0.1:0")
        sessions = [server.session("node", persistent=True), server.session("greedy", persistent=True)]
        procs = [
            BotProcess("node", launch_command(node_bot)),
            BotProcess("greedy", launch_command(GREEDY)),
        ]
        results, pids, codes = [], [], []
        try:
            for proc, session in zip(procs, sessions, strict=True):
                await proc.start(address, session.token)
            for seed in (31, 32):
                results.append(await server.play(sessions, seed, CONTROL))
                assert procs[0].proc is not None and procs[0].proc.returncode is None, "the bot exited"
                pids.append(procs[0].proc.pid)
            for session in sessions:
                server.revoke(session)
            for proc in procs:  # they leave on the Goodbye, without being stopped
                assert proc.proc is not None
                codes.append(await asyncio.wait_for(proc.proc.wait(), 15))
        finally:
            for proc in procs:
                await proc.stop(grace=0.5)
            await server.stop(0.2)
        return results, pids, codes

    results, pids, codes = asyncio.run(scenario())
    for result in results:
        check_clean(result, ["node", "greedy"])
    assert results[0].match_id != results[1].match_id
    assert pids[0] == pids[1], "the second match was not played by the same process"
    assert codes == [0, 0]


def test_node_bot_with_a_bad_token_exits_2_and_says_why(node_bot: Path) -> None:
    async def scenario() -> tuple[int, str]:
        server = RefereeServer()
        address = await server.start("127.0.0.1:0")
        proc = BotProcess("node", launch_command(node_bot))
        try:
            await proc.start(address, "not-a-token")
            assert proc.proc is not None
            code = await asyncio.wait_for(proc.proc.wait(), 15)
            await proc.settle()
            return code, proc.stderr_tail()
        finally:
            await proc.stop(grace=0.5)
            await server.stop(0.2)

    code, stderr = asyncio.run(scenario())
    assert code == 2
    assert "refused" in stderr and "unknown or expired token" in stderr


def test_node_bot_without_address_prints_usage(node_bot: Path) -> None:
    node = shutil.which("node")
    assert node is not None
    proc = subprocess.run([node, str(node_bot)], capture_output=True, text=True, timeout=30, env={})
    assert proc.returncode == 2
    assert "--address" in proc.stderr


BUSY_BOT = """
// A Node.js bot that thinks for BUSY_MS on its third decision without yielding its event loop,
// so grpc-js cannot answer the referee's keepalive pings meanwhile.
const grpc = require(process.env.NODE_DIR + '/node_modules/@grpc/grpc-js');
const protoLoader = require(process.env.NODE_DIR + '/node_modules/@grpc/proto-loader');
const options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
const v1 = grpc.loadPackageDefinition(protoLoader.loadSync(process.env.PROTO, options)).arena.v1;
const client = new v1.Referee(process.env.ARENA_ADDRESS, grpc.credentials.createInsecure());
const metadata = new grpc.Metadata();
metadata.add('arena-token', process.env.ARENA_TOKEN);
const call = client.Play(metadata);
let decisions = 0;
call.on('data', (msg) => {
  if (msg.message !== 'request') return;
  decisions += 1;
  if (decisions === 3) {
    const until = Date.now() + Number(process.env.BUSY_MS);
    while (Date.now() < until) {} // thinking, and blocking the event loop
  }
  call.write({ action: { request_id: msg.request.request_id, action: msg.request.legal_actions[0] } });
});
call.on('error', () => {});
call.on('end', () => call.end());
setInterval(() => {}, 1000); // stays up after its stream ends, as a kept-running bot does
"""


def test_a_node_bot_that_blocks_its_event_loop_is_told_why_it_lost(node_bot: Path, tmp_path: Path) -> None:
    """Thinking 6.5 s with 1 s + 10 s on the clock, but without yielding Node's event loop: the
    referee's keepalive cuts the connection (its pings go unanswered), and the forfeit says so and
    what to do instead of blaming the bot for closing its stream."""
    bot = tmp_path / "busy.js"
    bot.write_text(BUSY_BOT)
    env = {"NODE_DIR": str(NODE_DIR), "PROTO": str(ROOT / "proto" / "arena" / "v1" / "arena.proto"),
           "BUSY_MS": "6500"}  # fmt: skip
    specs = [resolve_bot(str(GREEDY)), BotSpec("busy", tuple(launch_command(bot)))]
    result = asyncio.run(
        play_local_match(specs, 5, TimeControl(move_time=1.0, bank=10.0), extra_env=[{}, env])
    )
    (forfeit,) = result.forfeits
    assert forfeit.seat == 1 and forfeit.reason is Reason.DISCONNECTED, forfeit
    assert "keepalive ping is not answered within 2 s" in forfeit.detail, forfeit.detail
    assert "must think in a worker thread" in forfeit.detail, forfeit.detail
    assert forfeit.evidence["time_used_ms"] < 8000, forfeit.evidence  # cut by the keepalive


def test_the_node_bot_started_before_the_referee_listens_connects_and_plays(node_bot: Path) -> None:
    """As the Python SDK (``tests/sdk/test_connect_wait.py``): the first connection is tried
    again for up to ``ARENA_CONNECT_WAIT`` seconds (it gave up at the first UNAVAILABLE)."""
    import socket as socket_module

    from arena.referee.server import RefereeConfig

    with socket_module.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"

    async def run() -> tuple[tuple[object, ...], int | None]:
        server = RefereeServer(RefereeConfig())
        session, other = server.session("node"), server.session("random")
        node = await asyncio.create_subprocess_exec(
            "node", str(node_bot), f"--address={address}", env={**os.environ, "ARENA_TOKEN": session.token},
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        rand = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "bots" / "random_bot.py"), f"--address={address}",
            env={**os.environ, "ARENA_TOKEN": other.token},
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await asyncio.sleep(1.5)  # both have failed to connect by now
        await server.start(address)
        try:
            result = await server.play([session, other], 8, TimeControl(move_time=2.0, bank=5.0))
            code = await asyncio.wait_for(node.wait(), 30)
            await asyncio.wait_for(rand.wait(), 30)
        finally:
            for p in (node, rand):
                if p.returncode is None:
                    p.kill()
            await server.stop(0)
        return result.forfeits, code

    forfeits, code = asyncio.run(run())
    assert forfeits == () and code == 0, (forfeits, code)
