"""What a worker is handed (a match to play) and what it does to the result before handing it
back (its replay packed for storage).

Kept apart from :mod:`arena.store.tournaments` (which re-exports these names) so that a worker
process imports neither SQLAlchemy nor the models: a worker starts in about a third of the time.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arena.referee.timecontrol import TimeControl
from arena.sandbox.limits import SandboxLimits

if TYPE_CHECKING:
    from arena.referee import MatchResult


@dataclass(frozen=True)
class SeatTask:
    """What a worker needs to launch one seat's bot."""

    version_id: int
    name: str
    command: tuple[str, ...]
    persistent: bool


@dataclass(frozen=True)
class MatchTask:
    """Everything a worker needs to play one match (picklable)."""

    match_id: int
    tournament_id: int
    seed: int
    seats: tuple[SeatTask, ...]
    control: TimeControl  # the tournament's, from :func:`arena.store.tournaments.time_control_of`
    sandbox: SandboxLimits | None = None
    rules: str = "1"  # the rules version id the match is played under (the tournament's)
    # Another match of this seed is still to be played (the coordinator sets it as it hands the
    # match out): the bots that played this one, having seen its dice, must not live on after it
    # (a kept-running process is stopped before the result is handed back), or they could pass
    # the throws on to the next seating on another worker through the machine's load.
    seed_again: bool = False

    @property
    def key(self) -> str:
        """A readable, unique match name: ``t3-m17``."""
        return f"t{self.tournament_id}-m{self.match_id}"


def compress_replay(text: str) -> tuple[bytes, str]:
    """zlib-compressed UTF-8 and the sha256 of the uncompressed text."""
    raw = text.encode("utf-8")
    return zlib.compress(raw, 6), hashlib.sha256(raw).hexdigest()


def pack_replay(result: MatchResult) -> MatchResult:
    """``result`` with its replay packed for storage (:attr:`MatchResult.packed`): done by the
    worker that played it, so that the coordinator, the one writer, does not spend its time
    compressing (and a cluster worker sends a smaller result)."""
    if result.packed is not None:
        return result
    return replace(result, packed=compress_replay(result.replay))
