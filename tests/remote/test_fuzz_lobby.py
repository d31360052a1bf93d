"""The remote lobby's connection path is total, over real sockets.  A remote bot speaking raw
HTTP/2 follows a drawn plan through its two matches against the greedy: at chosen requests it
drops its connection (coming back at once, a little later, or after its grace), opens a storm of
streams on its token, resets its stream, sends bytes that are not a message or answers twice.
Whatever the plan, the lobby ends with both matches played, the greedy never forfeits, a forfeit
of the remote bot has a detail (never an "arena bug"), and every record replays."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine import replay
from arena.lobby import Lobby, LobbyConfig
from arena.referee import MatchResult, Reason
from arena.store.bots import add_bot, add_remote_bot
from arena.store.db import Database
from tests.referee.fuzz_targets import fuzz_settings
from tests.remote.rawbot import answer_first_legal, messages, open_stream, reset_stream, send_garbage

REPO = Path(__file__).resolve().parents[2]
GRACE = 1.0
GAMES = 2
FORFEITS = {Reason.DISCONNECTED, Reason.MALFORMED_ACTION, Reason.TIMEOUT, Reason.NO_SHOW}


@dataclass(frozen=True)
class Drop:
    """Close the connection; a new stream ``after`` seconds later (None: after the grace)."""

    after: float | None


@dataclass(frozen=True)
class Storm:
    """``streams`` connections, each with a stream on the token closed at once; then a new one."""

    streams: int


@dataclass(frozen=True)
class Reset:
    """RST_STREAM on the stream; a new one at once."""


@dataclass(frozen=True)
class Garbage:
    """A gRPC message that is not a BotMessage."""


@dataclass(frozen=True)
class Twice:
    """The answer, sent twice."""


Step = Drop | Storm | Reset | Garbage | Twice
STEPS: st.SearchStrategy[Step] = st.one_of(
    st.builds(Drop, st.sampled_from([0.0, 0.05, 0.3, None])),
    st.builds(Storm, st.integers(1, 40)),
    st.just(Reset()),
    st.just(Garbage()),
    st.just(Twice()),
)
# by the ordinal of the request among all the bot's requests (a request sent again counts again)
PLANS = st.dictionaries(st.integers(1, 60), STEPS, min_size=1, max_size=5)


class FuzzedBot:
    """The remote bot: answers every request with its first legal action, except where the plan
    says otherwise; opens a new stream after each result or lost stream until told goodbye (or
    until ``stop``)."""

    def __init__(self, port: int, token: str, plan: dict[int, Step], stop: threading.Event) -> None:
        self.port, self.token, self.plan, self.stop = port, token, plan, stop
        self.seen = 0
        self.wait = 0.0  # seconds before the next stream
        self.streams = 0

    def run(self) -> str:
        while not self.stop.is_set() and self.streams < 300:
            time.sleep(self.wait)
            self.wait = 0.0
            try:
                sock = open_stream(self.port, self.token)
            except OSError:  # the lobby has closed, or is busy: look again
                time.sleep(0.05)
                continue
            self.streams += 1
            try:
                if self._play(sock) == "goodbye":
                    return "goodbye"
            finally:
                sock.close()
        return "stopped"

    def _play(self, sock: socket.socket) -> str:
        sock.settimeout(2.0)
        for message in messages(sock):
            if message.HasField("goodbye"):
                return "goodbye"
            if message.HasField("result"):
                return "result"
            if not message.HasField("request"):
                continue
            self.seen += 1
            step = self.plan.get(self.seen)
            if isinstance(step, Drop):
                self.wait = GRACE + 0.3 if step.after is None else step.after
                return "dropped"
            if isinstance(step, Storm):
                for _ in range(step.streams):
                    try:
                        open_stream(self.port, self.token).close()
                    except OSError:
                        break
                return "stormed"
            if isinstance(step, Reset):
                reset_stream(sock)
                return "reset"
            if isinstance(step, Garbage):
                send_garbage(sock)
                continue
            answer_first_legal(sock, message.request)
            if isinstance(step, Twice):
                answer_first_legal(sock, message.request)
        return "ended"


def check_lobby(home: Path, plan: dict[int, Step], seed: int) -> list[MatchResult]:
    """Run the lobby (a fresh database in ``home``) with the fuzzed bot following ``plan``;
    check the promises."""
    db = Database(f"sqlite:///{home}/lobby-{uuid.uuid4().hex}.db")
    add_bot(db, "greedy", REPO / "bots" / "greedy_bot.py")
    _, token = add_remote_bot(db, "remote")
    stop = threading.Event()

    async def main() -> Lobby:
        config = LobbyConfig(
            listen="127.0.0.1:0", opponents=("greedy",), games=GAMES, grace=GRACE, seed=seed, sandbox=None
        )
        lobby = Lobby(db, config, log=lambda _: None)
        address = await lobby.start()
        bot = FuzzedBot(int(address.rsplit(":", 1)[1]), token, plan, stop)
        running = asyncio.create_task(asyncio.to_thread(bot.run))
        try:
            await asyncio.wait_for(lobby.run(), 120)
        finally:
            stop.set()
            await lobby.close()
            await asyncio.wait_for(running, 15)
        return lobby

    try:
        lobby = asyncio.run(main())
    finally:
        db.close()
    assert len(lobby.results) == GAMES, lobby.results
    for result in lobby.results:
        rep = replay(result.replay)  # raises unless the record replays exactly
        assert rep.result["scores"] == list(result.scores)
        for forfeit in result.forfeits:
            assert result.seats[forfeit.seat].name == "remote", (forfeit, result.seats)
            assert forfeit.reason in FORFEITS, forfeit
            assert forfeit.detail and "arena bug" not in forfeit.detail, forfeit.detail
    return lobby.results


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``ARENA_HOME`` for the module's lobbies (their databases and the greedy's logs)."""
    folder = tmp_path_factory.mktemp("lobby-fuzz")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARENA_HOME", str(folder))
        patch.delenv("ARENA_DATABASE_URL", raising=False)
        yield folder


@fuzz_settings(5)
@given(plan=PLANS, seed=st.integers(1, 2**20))
def test_the_lobby_survives_any_plan_of_drops_storms_and_noise(
    home: Path, plan: dict[int, Step], seed: int
) -> None:
    check_lobby(home, plan, seed)


def test_a_bot_that_drops_past_its_grace_forfeits_one_match_and_plays_the_next(home: Path) -> None:
    """The plain case under the fuzz: a drop at the third request without a return within the
    grace costs that match (``disconnected``), and the bot plays its second one."""
    first, second = check_lobby(home, {3: Drop(None)}, seed=5)
    (forfeit,) = first.forfeits
    assert forfeit.reason is Reason.DISCONNECTED, forfeit
    assert f"did not reconnect within {GRACE:g}s" in forfeit.detail, forfeit.detail
    assert second.forfeits == (), second.forfeits
