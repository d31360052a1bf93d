"""Remote bots (issue 9): registered with a long-lived token, they connect in over TCP (and TLS)
to the lobby, are matched while online, survive a forced disconnect by reconnecting within the
grace period, and bad or reused tokens are refused.  Real gRPC, real bot processes, a real TCP
proxy whose connections the test cuts."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from arena.engine import replay
from arena.lobby import Lobby, LobbyConfig
from arena.referee.match import Match
from arena.referee.server import TlsFiles
from arena.sandbox import SandboxLimits, bwrap_problem
from arena.store.bots import add_remote_bot
from arena.store.db import Database
from arena.store.tournaments import get_tournament, load_replay
from arena.v1 import arena_pb2 as pb
from tests.remote.samplebot import random_remote_bot

REPO = Path(__file__).resolve().parent.parent.parent
METHOD = "/arena.v1.Referee/Play"


class Proxy:
    """A TCP proxy on 127.0.0.1 that can cut every open connection (a forced disconnect)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.writers: list[asyncio.StreamWriter] = []
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        """Reset every connection that is open now."""
        for w in self.writers:
            sock = w.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):  # reset, not a polite close
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.close()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


def _sandbox() -> SandboxLimits | None:
    return SandboxLimits() if bwrap_problem() is None else None


def test_remote_bot_survives_a_forced_disconnect(db: Database) -> None:
    """The remote bot's TCP connection is reset mid-match; it reconnects with its token and the
    match completes with no forfeit; its clock was not charged for the time away."""
    _, token = add_remote_bot(db, "remote")

    async def main() -> tuple[Lobby, Proxy, int, bytes]:
        cut_done = asyncio.Event()

        def on_event(m: Match) -> None:
            remote_seat = m.names.index("remote")
            if not cut_done.is_set() and m.events >= 150 and m.state.seat == remote_seat:
                cut_done.set()
                proxy.cut()

        config = LobbyConfig(
            listen="127.0.0.1:0",
            opponents=("greedy",),
            games=2,
            move_time=2.0,
            bank=5.0,
            grace=20.0,
            sandbox=_sandbox(),
        )
        lobby = Lobby(db, config, log=lambda _: None, on_event=on_event)
        address = await lobby.start()
        # the lobby's tournament plays from the start (it said "created, not started")
        assert get_tournament(db, lobby.tournament_id).status == "running"
        proxy = Proxy(int(address.rsplit(":", 1)[1]))
        await proxy.start()
        bot = await random_remote_bot(proxy.port, token, "--reconnect=20")
        try:
            await asyncio.wait_for(lobby.run(), 120)
        finally:
            await lobby.close()
            await proxy.close()
        _, err = await asyncio.wait_for(bot.communicate(), 30)
        assert cut_done.is_set(), "the test never cut the connection"
        return lobby, proxy, bot.returncode or 0, err

    lobby, proxy, code, err = asyncio.run(main())
    assert code == 0, err.decode()
    assert get_tournament(db, lobby.tournament_id).status == "finished"  # its games are played
    assert proxy.connections >= 2  # it really had to reconnect
    assert len(lobby.results) == 2
    assert lobby.results[0].seed != lobby.results[1].seed  # its second seat, not the dice it saw
    for result in lobby.results:
        assert result.forfeits == (), result.forfeits
        assert result.termination in ("normal", "round-cap")
        replay(result.replay)
    stored = load_replay(db, 1)
    assert replay(stored).result["scores"] == list(lobby.results[0].scores)


async def _lobby_with_a_dropping_bot(
    db: Database, token: str, games: int, on_event: Callable[[Match], None]
) -> tuple[Lobby, int, Proxy, asyncio.subprocess.Process]:
    """A started lobby (one-second grace) against ``greedy``, and the remote bot ``token``
    connected through a :class:`Proxy` the test can cut: (lobby, its port, proxy, bot)."""
    lobby = Lobby(
        db,
        LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=games, grace=1.0, sandbox=_sandbox()),
        log=lambda _: None,
        on_event=on_event,
    )
    address = await lobby.start()
    port = int(address.rsplit(":", 1)[1])
    proxy = Proxy(port)
    await proxy.start()
    return lobby, port, proxy, await random_remote_bot(proxy.port, token)


def test_remote_bot_that_stays_away_forfeits_after_the_grace_period(db: Database) -> None:
    """A remote bot that drops and never comes back is forfeited as disconnected."""
    _, token = add_remote_bot(db, "remote")

    async def main() -> Lobby:
        def on_event(m: Match) -> None:
            if m.events == 60:
                proxy.cut()
                bot.kill()

        lobby, _port, proxy, bot = await _lobby_with_a_dropping_bot(db, token, 1, on_event)
        try:
            await asyncio.wait_for(lobby.run(), 60)
        finally:
            await lobby.close()
            await proxy.close()
            await bot.wait()
        return lobby

    lobby = asyncio.run(main())
    (result,) = lobby.results
    (forfeit,) = result.forfeits
    assert str(forfeit.reason) == "disconnected"
    assert "did not reconnect within 1s" in forfeit.detail
    replay(result.replay)


def test_bad_and_reused_tokens_are_refused(db: Database) -> None:
    """An unknown token is UNAUTHENTICATED; a second stream on a connected bot's token is
    PERMISSION_DENIED; the connected bot's match is not disturbed."""
    _, token = add_remote_bot(db, "remote")

    async def attempt(port: int, tok: str) -> grpc.StatusCode:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = ch.stream_stream(
                METHOD,
                request_serializer=pb.BotMessage.SerializeToString,
                response_deserializer=pb.RefereeMessage.FromString,
            )(metadata=(("arena-token", tok),))
            try:
                await call.read()
            except grpc.aio.AioRpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK

    async def main() -> tuple[list[grpc.StatusCode], Lobby]:
        codes: list[grpc.StatusCode] = []
        lobby = Lobby(
            db,
            LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=1, sandbox=_sandbox()),
            log=lambda _: None,
        )
        address = await lobby.start()
        port = int(address.rsplit(":", 1)[1])
        codes.append(await attempt(port, "rt_not-a-real-token"))
        bot = await random_remote_bot(port, token)
        for _ in range(200):  # until the real bot is connected
            if lobby.remotes[0].session.stream_open:
                break
            await asyncio.sleep(0.05)
        codes.append(await attempt(port, token))
        try:
            await asyncio.wait_for(lobby.run(), 60)
        finally:
            await lobby.close()
            await bot.wait()
        return codes, lobby

    codes, lobby = asyncio.run(main())
    assert codes == [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED]
    (result,) = lobby.results
    assert result.forfeits == ()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and its key, made with openssl in ``folder``."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def _tls_lobby(db: Database, cert: Path, key: Path) -> Lobby:
    """A lobby serving TLS on a free local port, one game against greedy."""
    config = LobbyConfig(
        listen="127.0.0.1:0", opponents=("greedy",), games=1, tls=TlsFiles(cert, key), sandbox=_sandbox()
    )
    return Lobby(db, config, log=lambda _: None)


def test_remote_bot_over_tls(db: Database, tmp_path: Path) -> None:
    """With a certificate the lobby serves TLS; a bot that trusts the CA plays; plaintext fails."""
    cert, key = _self_signed(tmp_path)
    _, token = add_remote_bot(db, "remote")

    async def main() -> tuple[Lobby, int]:
        lobby = _tls_lobby(db, cert, key)
        address = await lobby.start()
        port = int(address.rsplit(":", 1)[1])
        plain = await random_remote_bot(port, token)  # no --tls-ca: cannot talk to a TLS port
        plain_code = await asyncio.wait_for(plain.wait(), 30)
        bot = await random_remote_bot(port, token, f"--tls-ca={cert}")
        try:
            await asyncio.wait_for(lobby.run(), 60)
        finally:
            await lobby.close()
            await bot.wait()
        return lobby, plain_code

    lobby, plain_code = asyncio.run(main())
    assert plain_code != 0
    (result,) = lobby.results
    assert result.forfeits == ()
    replay(result.replay)


def test_a_remote_bot_that_came_back_too_late_plays_its_next_match(db: Database) -> None:
    """A bot whose stream broke mid-match and that came back after its grace lost that match,
    and is matched again when it reconnects: its session no longer stays tied to the finished
    seat (an outside review's bot waited for ever for a Welcome, and the lobby never finished)."""
    _, token = add_remote_bot(db, "remote")
    first: list[Match] = []

    async def main() -> Lobby:
        def on_event(m: Match) -> None:
            if not first:
                first.append(m)
            if m is first[0] and m.events == 60:
                proxy.cut()
                bot.kill()

        lobby, port, proxy, bot = await _lobby_with_a_dropping_bot(db, token, 2, on_event)
        again: asyncio.subprocess.Process | None = None
        try:
            running = asyncio.create_task(lobby.run())
            while not lobby.results and not running.done():
                await asyncio.sleep(0.05)
            again = await random_remote_bot(port, token)  # the same bot, back after its grace
            await asyncio.wait_for(running, 90)
        finally:
            await lobby.close()
            await proxy.close()
            await bot.wait()
            if again is not None:
                with contextlib.suppress(ProcessLookupError):
                    again.kill()
                await again.wait()
        return lobby

    lobby = asyncio.run(main())
    assert len(lobby.results) == 2, lobby.results
    dropped, played = lobby.results
    assert [str(f.reason) for f in dropped.forfeits] == ["disconnected"]
    assert played.forfeits == ()


def test_a_tls_lobby_whose_local_socket_was_removed_still_plays(db: Database, tmp_path: Path) -> None:
    """The lobby's local socket folder removed from outside (a /tmp cleaner) before the match:
    the host serves its local bots on a new socket, and the TLS listener the remote bot dials
    is untouched (same address, still TLS).  Both seats play; nobody is blamed."""
    cert, key = _self_signed(tmp_path)
    _, token = add_remote_bot(db, "remote")

    async def main() -> tuple[Lobby, str, str, bool, int]:
        lobby = _tls_lobby(db, cert, key)
        address = await lobby.start()
        old = lobby.host.sock_dir
        assert old is not None
        shutil.rmtree(old)
        port = int(address.rsplit(":", 1)[1])
        bot = await random_remote_bot(port, token, f"--tls-ca={cert}")
        try:
            await asyncio.wait_for(lobby.run(), 60)
            moved = lobby.host.sock_dir not in (None, old)
            # the address the remote bot dialled still answers, with TLS (a handshake verified
            # against the certificate): lobby.server.listen_address is only what start() bound,
            # and a plaintext bot's failure here proves nothing (its token is still in use)
            tls_answers = await asyncio.to_thread(_tls_handshake, port, cert)
        finally:
            await lobby.close()
            await bot.wait()
        return lobby, moved, tls_answers

    lobby, moved, tls_answers = asyncio.run(main())
    (result,) = lobby.results
    assert result.forfeits == ()
    replay(result.replay)
    assert moved and tls_answers


def _tls_handshake(port: int, ca: Path) -> bool:
    """Whether 127.0.0.1:``port`` completes a TLS handshake verified against ``ca``."""
    import ssl

    context = ssl.create_default_context(cafile=str(ca))
    context.set_alpn_protocols(["h2"])
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="localhost"),
        ):
            return True
    except (OSError, ssl.SSLError):
        return False


def test_a_playing_lobby_holds_its_tournament_so_listings_say_running(db: Database) -> None:
    """While the lobby plays, its tournament is ``running`` as listings show it (a running
    tournament no live coordinator holds is shown ``interrupted``, and 'arena tournament resume'
    then marked it finished under the live lobby); a resume is refused while the lobby holds it,
    and after the lobby ends nobody holds it."""
    from arena.store.lease import LeaseHeldError, coordinated, coordinator_lease, shown_status

    add_remote_bot(db, "remote")

    async def main() -> int:
        lobby = Lobby(
            db,
            LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=1, sandbox=_sandbox()),
            log=lambda _: None,
        )
        await lobby.start()
        tid = lobby.tournament_id
        try:
            shown = shown_status(get_tournament(db, tid).status, tid in coordinated(db, [tid]))
            assert shown == "running"
            with pytest.raises(LeaseHeldError), coordinator_lease(db, tid):
                pass
            lobby.stop()
            await asyncio.wait_for(lobby.run(), 30)
        finally:
            await lobby.close()
        return tid

    tid = asyncio.run(main())
    assert coordinated(db, [tid]) == set()


def test_a_remote_bot_whose_games_are_played_is_told_goodbye_while_the_lobby_goes_on(db: Database) -> None:
    """Under ``arena serve`` the server goes on after the lobby's games (and other remote bots may
    still play): a remote bot whose own games are all played gets a Goodbye and exits 0 at once,
    not when the server stops (it waited). A stream it opens later with its token is told goodbye
    too, not refused as an unknown token."""
    _, token = add_remote_bot(db, "remote")
    logged: list[str] = []

    async def main() -> tuple[int, bytes, pb.RefereeMessage]:
        lobby = Lobby(
            db,
            LobbyConfig(listen="127.0.0.1:0", opponents=("greedy",), games=2, sandbox=_sandbox()),
            log=logged.append,
        )
        address = await lobby.start()
        bot = await random_remote_bot(int(address.rsplit(":", 1)[1]), token)
        try:
            assert await asyncio.wait_for(lobby.run(), 120) == 2
            # the lobby has not been closed: the bot leaves because it was told goodbye
            _, err = await asyncio.wait_for(bot.communicate(), 20)
            async with grpc.aio.insecure_channel(address) as channel:
                play = channel.stream_stream(
                    METHOD, pb.BotMessage.SerializeToString, pb.RefereeMessage.FromString
                )
                call = play(metadata=(("arena-token", token),))
                later = await asyncio.wait_for(call.read(), 10)
                call.cancel()
        finally:
            if bot.returncode is None:
                bot.kill()
            await lobby.close()
        return bot.returncode or 0, err, later

    code, err, later = asyncio.run(main())
    assert code == 0, err.decode()
    assert later.WhichOneof("message") == "goodbye", later
    assert later.goodbye.reason == "no further matches for this token"
    assert "remote: all its lobby games played (2 finished); told goodbye" in logged


def test_sample_opponents_need_no_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's 'arena serve --listen ... --opponents greedy,invader' (and the default
    opponent, greedy) on a fresh database: the samples are registered under their names the
    first time, as 'arena match' and tournaments do; it was "no bot named 'greedy'".  A name
    that is neither registered nor a sample is still refused."""
    from dataclasses import replace

    from arena.store.bots import list_bots
    from arena.store.errors import UnknownBotError

    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "fresh"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    database = Database()
    try:
        config = LobbyConfig(listen="127.0.0.1:0", opponents=("greedy", "invader"), players=3, sandbox=None)
        lobby = Lobby(database, config, log=lambda _: None)
        assert [v.filename for v in lobby.opponents] == ["greedy_bot.py", "invader_bot.py"]
        assert {b.bot.name for b in list_bots(database)} == {"greedy", "invader"}
        with pytest.raises(UnknownBotError, match="nosuch"):
            Lobby(database, replace(config, opponents=("greedy", "nosuch")), log=lambda _: None)
    finally:
        database.close()
