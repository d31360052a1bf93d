"""Bot sessions: the bearer tokens bots present, and the matches waiting for them.

A session is minted per launched bot.  A per-match session serves one match and its token is
revoked when that match ends; a persistent session (a bot kept running across matches, or a
remote bot) receives one assignment after another on the same token.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arena.tokens import token_hash

if TYPE_CHECKING:
    from .match import Match


@dataclass
class Assignment:
    """A seat in a match, waiting for the session's next stream."""

    match: Match
    seat: int


@dataclass(eq=False)
class BotSession:
    """One bot's credential and its queue of seats to play."""

    name: str
    token: str
    persistent: bool = False
    assignments: asyncio.Queue[Assignment | None] = field(default_factory=asyncio.Queue)
    stream_open: bool = False
    revoked: bool = False
    hello: str = ""
    grace: float = 0.0  # seconds a dropped stream may take to reconnect to the same seat
    current: Assignment | None = None  # the seat being played, while its stream is attached
    departed: str = ""  # why the client behind it ended its stream, when it said (a forfeit's detail)

    def assign(self, match: Match, seat: int) -> None:
        """Queue a seat for this session's next stream."""
        self.assignments.put_nowait(Assignment(match, seat))

    def close(self) -> None:
        """No further assignment: a waiting stream gets a Goodbye."""
        self.assignments.put_nowait(None)


class SessionRegistry:
    """Tokens to sessions.  Tokens are random, 192 bits, and compared in constant time.

    Remote bots hold long-lived tokens of which only the sha256 is known here: a session
    expected by :meth:`expect_remote` is found by hashing the token a stream presents.
    """

    def __init__(self) -> None:
        self._by_token: dict[str, BotSession] = {}
        self._remote: dict[str, BotSession] = {}
        # Revoked persistent sessions whose bot may be between two streams: its next stream
        # is told goodbye (once) instead of being refused.
        self._retired: dict[str, BotSession] = {}

    def mint(self, name: str, *, persistent: bool = False) -> BotSession:
        """A new session with a fresh token."""
        session = BotSession(name=name, token="at_" + secrets.token_urlsafe(24), persistent=persistent)
        self._by_token[session.token] = session
        return session

    def expect_remote(self, name: str, hashed: str, *, grace: float = 30.0) -> BotSession:
        """The (persistent) session of the remote bot whose token hashes to ``hashed``."""
        session = self._remote.get(hashed)
        if session is None or session.revoked:
            session = BotSession(name=name, token="", persistent=True, grace=grace)
            self._remote[hashed] = session
        return session

    def lookup(self, token: str) -> BotSession | None:
        """The live session of ``token``, or None."""
        session = self._by_token.get(token)
        if session is None:
            remote = self._remote.get(token_hash(token))
            return remote if remote is not None and not remote.revoked else None
        if session.revoked or not secrets.compare_digest(session.token, token):
            return None
        return session

    def retired(self, token: str) -> BotSession | None:
        """The revoked persistent session of ``token`` if its goodbye is still owed (only once), or
        the revoked session of the remote bot holding ``token`` (every time it comes back)."""
        session = self._retired.pop(token, None)
        if session is not None and secrets.compare_digest(session.token, token):
            return session
        # A remote bot whose games are over (its session revoked): told goodbye each time it comes
        # back, not refused as an unknown token (which the SDK takes for a fault, and which would
        # count towards its address's lockout); only a holder of the real token gets this far.
        remote = self._remote.get(token_hash(token)) if token else None
        return remote if remote is not None and remote.revoked else None

    def revoke(self, session: BotSession) -> None:
        """Invalidate the token: later streams with it are refused as unauthenticated (except
        that a persistent session's next stream gets the Goodbye it would have waited for)."""
        session.revoked = True
        session.current = None  # its seat (and with it the whole match) is no longer its to play
        self._by_token.pop(session.token, None)
        if session.persistent and session.token:  # a remote session has no token of its own
            self._retired[session.token] = session
        session.close()

    def forget(self, session: BotSession) -> None:
        """No goodbye is owed to ``session`` any more: the process that held its token is gone (its
        host stopped it).  Without this a kept-running bot that forfeited, and was stopped before
        it could ask for its goodbye, stayed in the registry for as long as the process lived."""
        if self._retired.get(session.token) is session:
            del self._retired[session.token]
