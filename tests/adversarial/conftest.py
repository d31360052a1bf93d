"""Fixtures of the adversarial tests: the sandbox must be available, orphans are adopted, and
one shared referee serves every hostile match of a module.

The shared referee: ``play_local_match`` (what ``arena match`` runs) normally starts a referee of
its own for each match.  Here it is pointed at ONE :class:`RefereeServer` that lives for the whole
module (``SharedReferee.play`` swaps the server that ``play_local_match`` constructs for a
handle on the shared one, which it may use but not stop).  So every hostile match goes through
the real ``play_local_match`` code with the real sandbox, and after each of them the same server
must still play a normal match: an attack that damages the referee fails the test that made it
(and the ones after it).
"""

from __future__ import annotations

import asyncio
import ctypes
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from arena import matchrunner
from arena.matchrunner import BotSpec, play_local_match, resolve_bot
from arena.referee import MatchResult, RefereeServer, TimeControl
from arena.referee.match import Match
from arena.referee.sessions import BotSession
from arena.sandbox import SandboxLimits, bwrap_problem

from .helpers import (
    FAULTY,
    CgroupRecorder,
    child_pids,
    is_alive,
    kill_all,
    reap_children,
    wait_gone,
)

PR_SET_CHILD_SUBREAPER = 36

# Small limits, so the resource attacks hit them fast (the defaults are 1 GiB and 64 processes).
LIMITS = SandboxLimits(cpu_seconds=20, memory_mb=256, processes=32)


@pytest.fixture(scope="session", autouse=True)
def sandbox_required() -> None:
    """These tests are about the sandbox: without bubblewrap they cannot say anything."""
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")


@pytest.fixture(scope="module", autouse=True)
def adopt_orphans() -> Iterator[None]:
    """Make the test process the subreaper of everything it starts: a process orphaned by its
    launcher (bubblewrap, a shell, a double fork) is re-parented here instead of to init, so the
    tests see it (and it is reaped).  Per module: the rest of the session is left as it was."""
    libc = ctypes.CDLL(None, use_errno=True)
    ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    if ok:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture(autouse=True)
def reap_adopted() -> Iterator[None]:
    """After each test, reap the zombies this subreaper adopted (killed coordinators' and
    sandboxes' leftovers), so they do not pile up over the session."""
    yield
    reap_children()


def _minted(envs: Sequence[dict[str, str]], sessions: list[BotSession], session: BotSession) -> BotSession:
    """Record seat k's new session, and put its token where a bot's environment asks for
    ``{token<k>}`` (play_local_match mints every token before it launches any bot, and hands
    each bot its environment dict as is)."""
    placeholder = f"{{token{len(sessions)}}}"
    sessions.append(session)
    for env in envs:
        for key, value in env.items():
            env[key] = value.replace(placeholder, session.token)
    return session


class _Own(RefereeServer):
    """A referee of the match's own (``shared=False``), recording the sessions it mints."""

    def __init__(self, config: Any, envs: Sequence[dict[str, str]]) -> None:
        super().__init__(config)
        self.envs = envs
        self.sessions: list[BotSession] = []

    def session(self, name: str, *, persistent: bool = False) -> BotSession:
        return _minted(self.envs, self.sessions, super().session(name, persistent=persistent))


class _Borrowed:
    """What ``play_local_match`` gets instead of a new RefereeServer: the shared one, which it
    may use but not stop.  Records the sessions (tokens) it mints."""

    def __init__(self, server: RefereeServer, envs: Sequence[dict[str, str]]) -> None:
        self.server = server
        self.envs = envs
        self.sessions: list[BotSession] = []

    async def start(self, address: str = "") -> str:
        return self.server.address

    def session(self, name: str, *, persistent: bool = False) -> BotSession:
        return _minted(self.envs, self.sessions, self.server.session(name, persistent=persistent))

    async def play(self, *args: Any, **kwargs: Any) -> MatchResult:
        return await self.server.play(*args, **kwargs)

    async def stop(self, grace: float = 1.0) -> None:
        return None


@dataclass
class Played:
    """One match played, with what the checks need."""

    result: MatchResult
    names: list[str]
    tokens: list[str]
    launched: set[int]  # the processes play_local_match started (bubblewrap), seen at the first event
    cgroups: CgroupRecorder
    logs: list[Path]  # stderr log by seat
    elapsed: float
    adopted_before: set[int] = field(default_factory=set)

    def stderr(self, seat: int) -> str:
        return self.logs[seat].read_text(errors="replace")

    def markers(self) -> list[str]:
        """Strings only this match's bot processes have on their command line."""
        return list(self.tokens)


def spec(bot: str | Path) -> BotSpec:
    """A sample bot by name or a bot file (a bare ``*.py`` name is one of bots/faulty)."""
    text = str(bot)
    if text.endswith(".py") and "/" not in text:
        return resolve_bot(str(FAULTY / text))
    return resolve_bot(text)


class SharedReferee:
    """One RefereeServer on one event loop for every hostile match of a module."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.sock_dir = Path(tempfile.mkdtemp(prefix="arena-adv-"))
        self.server = RefereeServer()
        self.address = self.loop.run_until_complete(
            self.server.start(f"unix:{self.sock_dir / 'referee.sock'}")
        )
        self.matches = 0

    def close(self) -> None:
        self.loop.run_until_complete(self.server.stop(0.2))
        self.loop.close()
        shutil.rmtree(self.sock_dir, ignore_errors=True)

    def play(
        self,
        bots: Sequence[str | Path],
        *,
        log_dir: Path,
        control: TimeControl,
        seed: int = 4242,
        env: Sequence[dict[str, str]] | None = None,
        sandbox: SandboxLimits | None = LIMITS,
        shared: bool = True,
        match_id: str | None = None,
    ) -> Played:
        """Play one match through ``play_local_match`` (on the shared server unless ``shared``
        is False: then on a referee of its own, as ``arena match`` does).  ``env[k]`` is seat
        k's extra environment; ``{token<j>}`` in a value becomes seat j's token."""
        specs = [spec(b) for b in bots]
        match_id = match_id or f"adv{self.matches}"
        self.matches += 1
        launched: set[int] = set()
        before = child_pids()

        def on_event(match: Match) -> None:
            if not launched:
                launched.update(child_pids(include_zombies=False) - before)

        envs = [dict(e) for e in env] if env else None
        made: list[_Own | _Borrowed] = []

        def server(config: Any = None) -> _Own | _Borrowed:
            made.append(_Borrowed(self.server, envs or []) if shared else _Own(config, envs or []))
            return made[-1]

        recorder = CgroupRecorder()
        start = time.monotonic()
        with mock.patch.object(matchrunner, "RefereeServer", server), recorder.recording():
            result = self.loop.run_until_complete(
                play_local_match(
                    specs,
                    seed,
                    control,
                    match_id=match_id,
                    log_dir=log_dir,
                    on_event=on_event,
                    extra_env=envs,
                    sandbox=sandbox,
                )
            )
        elapsed = time.monotonic() - start
        logs = [log_dir / f"{match_id}-seat{seat}-{s.name}.stderr.log" for seat, s in enumerate(specs)]
        return Played(
            result,
            [s.name for s in specs],
            [s.token for s in made[0].sessions],
            launched,
            recorder,
            logs,
            elapsed,
            before,
        )

    def assert_clean(self, played: Played, *, wait: float = 5.0) -> None:
        """Nothing of the match survives: no process with one of its tokens or the shared
        socket directory on its command line, the launched processes are gone, no orphan was
        left to us, and every bot cgroup was removed."""
        markers = [*played.markers(), str(self.sock_dir)]
        left = wait_gone(markers, timeout=wait)
        kill_all(left)
        assert not left, f"processes survived the match: {left}"
        assert played.launched, "no bot process was seen: the test did not launch what it meant to"
        alive = {p for p in played.launched if is_alive(p)}
        assert not alive, f"launched processes still running: {sorted(alive)}"
        deadline = time.monotonic() + wait
        while True:
            orphans = child_pids(include_zombies=False) - played.adopted_before
            if not orphans or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        kill_all(orphans)
        reap_children()
        assert not orphans, f"orphaned processes were left to the test process: {sorted(orphans)}"
        assert not played.cgroups.left_over(), f"bot cgroups not removed: {played.cgroups.left_over()}"


@pytest.fixture(scope="module")
def shared_referee() -> Iterator[SharedReferee]:
    """The one referee of a module's hostile matches (its own event loop; closed with the module)."""
    referee = SharedReferee()
    yield referee
    referee.close()
