"""The match host with real bot processes and a real referee: kept-running bots, restarts, the
exit watch, evidence, sandbox per match, and the command-line options every bot command has."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.endings import Reason
from arena.hosting import BotSpec, LocalSeat, MatchHost
from arena.lobby import Lobby, LobbyConfig
from arena.matchrunner import resolve_bot
from arena.referee import RefereeConfig, TimeControl
from arena.sandbox import SandboxLimits, bwrap_problem
from arena.store.bots import add_bot, add_remote_bot
from arena.store.db import Database
from arena.store.tournaments import get_tournament, time_control_of

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAULTY = HERE.parents[1] / "bots" / "faulty"
FAST = TimeControl(0.5, 2.0)
NEEDS_BWRAP = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap: {bwrap_problem()}")


def kept(bot: BotSpec, identity: object = None) -> LocalSeat:
    return LocalSeat(bot, persistent=True, identity=identity)


def test_kept_running_bots_are_reused_and_a_forfeit_always_restarts_the_bot() -> None:
    """Two greedy bots play two matches on the same processes; a quitter that forfeits is
    replaced before its next match, every time (no race with its process's exit)."""
    greedy = resolve_bot("greedy")
    quitter = BotSpec("quitter", resolve_bot(str(FAULTY / "quitter_bot.py")).command)

    async def scenario() -> tuple[list[int | None], int, int, list[str]]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            pids = []
            for seed in (1, 2):
                result = await host.play(
                    [kept(greedy, "a"), kept(greedy, "b")], seed, FAST, match_id=f"g{seed}"
                )
                assert not result.forfeits
                pids.append(next(iter(host.pool.values())).proc.pid)
            launched = host.launched
            reasons = []
            for seed in (3, 4, 5):
                result = await host.play(
                    [kept(greedy, "a"), kept(quitter, "q")], seed, FAST, match_id=f"q{seed}"
                )
                reasons += [str(f.reason) for f in result.forfeits]
            return pids, launched, host.restarts, reasons
        finally:
            await host.close()

    pids, launched, restarts, reasons = asyncio.run(scenario())
    assert pids[0] is not None and pids[0] == pids[1]  # the same process played both matches
    assert launched == 2
    assert reasons == ["crashed"] * 3
    assert restarts == 2  # the quitter: launched for match 3, restarted for matches 4 and 5


def test_an_innocent_kept_bot_in_its_set_up_when_the_match_ends_plays_on() -> None:
    """The opponent dies before connecting, so the match ends while the kept bot is still in its
    set-up (it owes its Ready). The referee ended the call at once: the bot's Ready went into a
    finished call (gRPC: INTERNAL), the SDK took that for a dropped stream and exited, and the
    bot was charged a ``crashed`` forfeit in its next match, through no fault of its own. The
    call now stays open for what the bot owes: the same process plays every match, unforfeited."""
    slow = BotSpec("slow", resolve_bot(str(HERE / "slow_setup_bot.py")).command)
    crash = BotSpec("crash", resolve_bot(str(HERE / "crash_bot.py")).command)

    async def scenario() -> tuple[list[list[str]], set[int | None]]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            innocent: list[list[str]] = []
            pids: set[int | None] = set()
            for seed in (1, 2, 3):
                result = await host.play([kept(slow, "s"), kept(crash, "c")], seed, FAST, match_id=f"c{seed}")
                assert [f.seat for f in result.forfeits] == [1], result.forfeits
                innocent.append([f"{f.reason}: {f.detail}" for f in result.forfeits if f.seat == 0])
                pids.add(host.pool[("s", "slow", slow.command, None, 0)].proc.pid)
            return innocent, pids
        finally:
            await host.close()

    innocent, pids = asyncio.run(scenario())
    assert innocent == [[], [], []]
    assert len(pids) == 1  # one process played all three: it never exited


def test_an_innocent_kept_bot_whose_set_up_overruns_the_wait_for_it_plays_on() -> None:
    """A set-up may overrun the match's wait for it (5 s): the match starts anyway and charges the
    overrun to the bot's first decision. When the opponent died before connecting, the finished
    match's call stayed open for the owed Ready only 6 s: a 6.5 s set-up (well within a decision's
    budget of 0.5 s + 2 s bank) wrote its Ready into a finished call, the SDK exited, and the bot
    was charged a ``crashed`` forfeit in its next match. The call now waits as long as the match
    would have let the set-up run without a timeout."""
    slow = BotSpec("slow", resolve_bot(str(HERE / "slow_setup_bot.py")).command)
    crash = BotSpec("crash", resolve_bot(str(HERE / "crash_bot.py")).command)
    greedy = resolve_bot("greedy")

    async def scenario() -> tuple[list[str], set[int | None]]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            innocent: list[str] = []
            pids: set[int | None] = set()
            seat = LocalSeat(slow, persistent=True, identity="s", extra_env={"SETUP_S": "6.5"})
            for seed, other in ((1, crash), (2, greedy)):
                result = await host.play([seat, kept(other, other.name)], seed, FAST, match_id=f"o{seed}")
                innocent += [f"{f.reason}: {f.detail}" for f in result.forfeits if f.seat == 0]
                pids.add(host.pool[("s", "slow", slow.command, None, 0)].proc.pid)
            return innocent, pids
        finally:
            await host.close()

    innocent, pids = asyncio.run(scenario())
    assert innocent == []
    assert len(pids) == 1  # one process played both matches: it never exited


def test_a_kept_bot_that_sends_no_hello_and_hurries_on_is_not_held_up() -> None:
    """A Hello is optional: a kept bot that sends none, and opens its next stream as soon as it
    reads a result, is neither refused ('already in use by another stream') while the referee
    keeps its finished match's call open for what it might still owe, nor kept waiting."""
    eager = BotSpec("eager", resolve_bot(str(HERE / "eager_bot.py")).command)
    crash = BotSpec("crash", resolve_bot(str(HERE / "crash_bot.py")).command)
    greedy = resolve_bot("greedy")

    async def scenario() -> tuple[list[str], set[int | None], float]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            forfeits: list[str] = []
            pids: set[int | None] = set()
            started = time.monotonic()
            for seed in range(1, 7):  # (a seed apart each: a bot that has seen the dice is replaced)
                other = crash if seed % 2 else greedy
                seats = [kept(eager, "e"), kept(other, other.name)]
                result = await host.play(seats, seed, FAST, match_id=f"m{seed}")
                forfeits += [f"{f.reason}: {f.detail}" for f in result.forfeits if f.seat == 0]
                entry = host.pool.get(("e", "eager", eager.command, None, 0))  # (gone: it forfeited)
                pids.add(entry.proc.pid if entry is not None else None)
            return forfeits, pids, time.monotonic() - started
        finally:
            await host.close()

    forfeits, pids, took = asyncio.run(scenario())
    assert forfeits == []
    assert len(pids) == 1  # one process played all six matches
    assert took < 60  # (six matches; a bot kept waiting for an owed Hello would add 2 s a match at most)


def test_a_kept_running_bot_that_dies_before_connecting_is_reported_at_once() -> None:
    """The exit watch covers kept-running bots too (``arena evaluate``'s tables had none: such a
    bot waited out the whole connect timeout as a no-show), and the forfeit carries its stderr."""
    crash = BotSpec("crash", resolve_bot(str(HERE / "crash_bot.py")).command)

    async def scenario() -> tuple[float, list[tuple[Reason, str, str]]]:
        host = MatchHost(sandbox=None, config=RefereeConfig(connect_timeout=30.0))
        await host.start()
        try:
            start = time.monotonic()
            result = await host.play([kept(resolve_bot("greedy")), kept(crash)], 7, FAST)
            took = time.monotonic() - start
            return took, [
                (f.reason, f.detail, str(f.evidence.get("stderr_tail", ""))) for f in result.forfeits
            ]
        finally:
            await host.close()

    took, forfeits = asyncio.run(scenario())
    assert len(forfeits) == 1
    reason, detail, tail = forfeits[0]
    assert reason is Reason.CRASHED
    assert "cannot even start" in tail and "before connecting" in detail
    assert took < 15  # not the 30 s connect timeout


@NEEDS_BWRAP
def test_the_sandbox_is_chosen_per_match_and_kept_bots_are_not_shared_across_sandboxes() -> None:
    """A worker's host serves tournaments with and without a sandbox: the same bot version is a
    different kept-running process under each (the pool keys on the sandbox)."""
    greedy = resolve_bot("greedy")

    async def scenario() -> tuple[int, set[bool]]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            for seed, limits in ((3, None), (4, SandboxLimits()), (5, None)):  # (a new seed each)
                result = await host.play([kept(greedy, 1), kept(greedy, 2)], seed, FAST, sandbox=limits)
                assert not result.forfeits
            return host.launched, {entry.proc.sandbox is not None for entry in host.pool.values()}
        finally:
            await host.close()

    launched, sandboxed = asyncio.run(scenario())
    assert launched == 4 and sandboxed == {True, False}


def test_every_bot_command_has_no_sandbox_and_cpu_time() -> None:
    arena = str(Path(sys.executable).parent / "arena")
    for command in (["match"], ["evaluate"], ["serve"], ["tournament", "run"], ["tournament", "create"]):
        out = subprocess.run(
            [arena, *command, "--help"], capture_output=True, text=True, env={"COLUMNS": "200"}
        )
        assert out.returncode == 0, out.stderr
        assert "--no-sandbox" in out.stdout and "--cpu-time" in out.stdout, command


def test_the_lobby_has_the_cpu_clock_and_stores_it_like_a_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lobby's tournament row holds its clock in the columns every tournament uses, and it
    reads back through the one rebuilder (:func:`time_control_of`); the config has no clock."""
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    db = Database()
    add_bot(db, "greedy", REPO / "bots" / "greedy_bot.py")
    add_remote_bot(db, "remote")
    config = LobbyConfig(
        listen="127.0.0.1:0", opponents=("greedy",), move_time=0.5, bank=3.0, cpu_clock=True, sandbox=None
    )
    assert config.control == TimeControl(0.5, 3.0, cpu=True)

    async def start() -> int:
        lobby = Lobby(db, config, log=lambda _: None)
        try:
            await lobby.start()
            return lobby.tournament_id
        finally:
            await lobby.close()

    try:
        t = get_tournament(db, asyncio.run(start()))
        assert time_control_of(t) == TimeControl(0.5, 3.0, cpu=True)
        assert "cpu_clock" not in json.loads(t.config)
    finally:
        db.close()


def test_a_kept_running_bot_never_plays_a_seed_it_has_played() -> None:
    """Every seating of a seed has the same dice and a bot sees every throw of its games: a
    process that played a seed is replaced before it plays that seed again (in another seat),
    kept for a new seed, and the fresh process is not counted as a restart."""
    greedy = resolve_bot("greedy")

    async def scenario() -> tuple[list[tuple[int | None, ...]], int]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            pids = []
            for seed, seating in ((7, ("a", "b")), (7, ("b", "a")), (8, ("b", "a")), (8, ("a", "b"))):
                result = await host.play(
                    [kept(greedy, who) for who in seating], seed, FAST, match_id=f"m{seed}"
                )
                assert not result.forfeits
                by_identity = {key[0]: entry.proc.pid for key, entry in host.pool.items()}
                pids.append((by_identity["a"], by_identity["b"]))
            return pids, host.restarts
        finally:
            await host.close()

    pids, restarts = asyncio.run(scenario())
    first, second, third, fourth = pids
    assert not set(first) & set(second)  # seed 7 again: both bots are fresh processes
    assert third == second  # a new seed: the same processes play on
    assert not set(third) & set(fourth)  # seed 8 again: fresh again
    assert restarts == 0


@pytest.mark.parametrize(
    "limits",
    [None, pytest.param(SandboxLimits(), marks=NEEDS_BWRAP)],
    ids=["unsandboxed", "sandboxed"],
)
def test_a_socket_removed_from_outside_is_replaced_and_no_bot_is_blamed(
    limits: SandboxLimits | None, caplog: pytest.LogCaptureFixture
) -> None:
    """The referee's socket folder removed while the host runs (a /tmp cleaner; another pid
    namespace's sweep did it in a CI run): the next match's new bots used to "crash before
    connecting" (sandboxed: bwrap can't find the folder), both blamed for the arena's loss.  Now
    the host serves on a new socket; the kept-running bot keeps its process and its stream."""
    greedy, rand = resolve_bot("greedy"), resolve_bot("random")

    async def scenario() -> tuple[list[int | None], list[str], int, bool]:
        host = MatchHost(sandbox=limits)
        await host.start()
        try:
            pids, forfeits = [], []
            first = host.sock_dir
            for seed in (11, 12, 13):
                if seed != 11:
                    assert host.sock_dir is not None
                    shutil.rmtree(host.sock_dir)
                seats = [kept(greedy, "a"), LocalSeat(rand)]
                result = await host.play(seats, seed, FAST, match_id=f"m{seed}")
                forfeits += [f"{f.seat}: {f.reason} {f.detail}" for f in result.forfeits]
                pids.append(next(iter(host.pool.values())).proc.pid)
            assert first is not None and host.sock_dir is not None
            return pids, forfeits, host.restarts, host.sock_dir != first and host.sock_dir.is_dir()
        finally:
            await host.close()

    with caplog.at_level(logging.WARNING, logger="arena.hosting.host"):
        pids, forfeits, restarts, moved = asyncio.run(scenario())
    assert forfeits == []
    assert pids[0] is not None and pids == [pids[0]] * 3 and restarts == 0  # the kept bot played on
    assert moved
    assert sum("was removed from outside this process" in r.getMessage() for r in caplog.records) == 2


def test_matches_starting_together_after_the_socket_was_removed_all_get_the_new_one() -> None:
    """Three matches started at once (``arena evaluate``'s tables, a lobby's pairings) on a host
    whose socket folder was removed: the first replaced it while the others read the old address
    (the new socket already existed, the address was not set yet) or replaced it again; two of
    three matches had a bot "crash before connecting"."""
    greedy, rand = resolve_bot("greedy"), resolve_bot("random")

    async def scenario() -> tuple[list[str], int]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            assert host.sock_dir is not None
            shutil.rmtree(host.sock_dir)
            results = await asyncio.gather(
                *(
                    host.play([LocalSeat(greedy), LocalSeat(rand)], seed, FAST, match_id=f"t{seed}")
                    for seed in (1, 2, 3)
                )
            )
            return [f"{f.seat}: {f.reason} {f.detail}" for r in results for f in r.forfeits], len(
                host.server._servers
            )
        finally:
            await host.close()

    forfeits, servers = asyncio.run(scenario())
    assert forfeits == []
    assert servers == 2  # one replacement


def test_a_folder_made_in_place_of_the_removed_one_is_not_taken_for_it() -> None:
    """The folder removed (a /tmp cleaner), then one of the same name made by someone else (any
    user may create a free name in /tmp), with a listener of theirs in it: the host took it for
    its own (a socket was there) and its bots dialled that listener, both blamed.  Now the host
    knows its socket by device and inode and serves on a new one; the other folder is left."""
    greedy, rand = resolve_bot("greedy"), resolve_bot("random")

    async def scenario() -> tuple[list[str], bool, Path]:
        host = MatchHost(sandbox=None)
        await host.start()
        try:
            planted = host.sock_dir
            assert planted is not None
            shutil.rmtree(planted)
            planted.mkdir()
            with socket.socket(socket.AF_UNIX) as listener:
                listener.bind(str(planted / "referee.sock"))
                listener.listen(8)
                result = await host.play([LocalSeat(greedy), LocalSeat(rand)], 5, FAST, match_id="planted")
            moved = host.sock_dir != planted
        finally:
            await host.close()
        return [f"{f.seat}: {f.reason} {f.detail}" for f in result.forfeits], moved, planted

    forfeits, moved, planted = asyncio.run(scenario())
    try:
        assert forfeits == []
        assert moved
        assert planted.is_dir()  # not the host's to remove
    finally:
        shutil.rmtree(planted, ignore_errors=True)
