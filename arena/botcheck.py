"""The check a bot passes before it is registered: a short match against a sample bot.

The file is copied alone into a fresh folder (as the registry will store it) and plays a
2-player match against ``random`` with a fixed seed, sandboxed unless told otherwise, until it
has made :data:`DECISIONS` decisions or the game ends.  A bot that forfeits it (crashes, never
connects, times out, sends an illegal or malformed action, ...) fails the check.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from arena.botref import resolve
from arena.matchrunner import BotSpec, play_local_match
from arena.referee import MatchResult, TimeControl
from arena.referee.match import Match
from arena.safetext import printable
from arena.sandbox import SandboxLimits, launch_command

DECISIONS = 20  # decisions the bot must make without a fault
SEED = 1
OPPONENT = "random"
CONTROL = TimeControl(1.0, 10.0)  # a tournament's default time control


@dataclass(frozen=True)
class CheckResult:
    """How the check went: ``passed``, or the forfeit's ``reason`` and ``detail`` with the tail
    of the bot's stderr."""

    passed: bool
    decisions: int
    duration: float
    reason: str = ""
    detail: str = ""
    stderr_tail: str = ""

    def summary(self) -> str:
        """One line: ``passed: 20 decisions in 0.8s`` or ``crashed: the process exited ...``."""
        if self.passed:
            return f"passed: {self.decisions} decisions without a fault in {self.duration:.1f}s"
        return f"{self.reason}: {self.detail}"


async def check_bot(
    path: Path,
    *,
    sandbox: SandboxLimits | None,
    decisions: int = DECISIONS,
    control: TimeControl = CONTROL,
    log_dir: Path | None = None,
) -> CheckResult:
    """Play the check match of the bot file ``path`` (see the module docstring).

    Raises :class:`arena.sandbox.BotLaunchError` when the bot cannot be started at all and
    :class:`arena.sandbox.SandboxUnavailableError` when ``sandbox`` is asked for and impossible.
    """
    folder = Path(tempfile.mkdtemp(prefix="arena-check-"))
    try:
        copy = folder / path.name
        shutil.copy2(path, copy)
        candidate = BotSpec(printable(path.stem) or "candidate", tuple(launch_command(copy)))
        opponent = resolve(OPPONENT)
        result = await _play(
            candidate, BotSpec(opponent.name, opponent.command), sandbox, decisions, control, log_dir
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    # the bot ran from a private copy: its messages name the file the user gave
    return replace(
        result,
        detail=result.detail.replace(str(copy), str(path)),
        stderr_tail=result.stderr_tail.replace(str(copy), str(path)),
    )


async def _play(
    candidate: BotSpec,
    opponent: BotSpec,
    sandbox: SandboxLimits | None,
    decisions: int,
    control: TimeControl,
    log_dir: Path | None,
) -> CheckResult:
    enough = asyncio.Event()
    made = 0

    def on_event(match: Match) -> None:
        nonlocal made
        made = match.clocks[0].decisions
        if made >= decisions:
            enough.set()

    start = time.monotonic()
    game = asyncio.create_task(
        play_local_match(
            [candidate, opponent],
            SEED,
            control,
            match_id="check",
            log_dir=log_dir,
            on_event=on_event,
            sandbox=sandbox,
        )
    )
    stop = asyncio.create_task(enough.wait())
    await asyncio.wait({game, stop}, return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    if not game.done():  # enough decisions: the rest of the game proves nothing more
        game.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await game
        return CheckResult(True, made, time.monotonic() - start)
    result: MatchResult = game.result()
    duration = time.monotonic() - start
    mine = [f for f in result.forfeits if f.seat == 0]
    if not mine:
        return CheckResult(True, result.seats[0].decisions, duration)
    f = mine[0]
    return CheckResult(
        False,
        result.seats[0].decisions,
        duration,
        reason=str(f.reason),
        detail=f.detail,
        stderr_tail=str(f.evidence.get("stderr_tail", "")),
    )
