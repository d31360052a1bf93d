"""Login sessions: a random session id in an HttpOnly cookie, only its sha256 in the database,
and a per-session CSRF secret that every form of a signed-in user carries.  That secret is derived
from the session id (:func:`csrf_of`), never stored: the database holds nothing a form could use
(``login_session.csrf_secret`` keeps only a marker).

Signed-out forms (sign in, sign up) use a double-submit cookie instead (:data:`CSRF_COOKIE`): the
form's hidden field must equal that cookie, which a foreign site can neither read nor set.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlmodel import col, delete, select

from arena.store.db import Database
from arena.store.models import utcnow
from arena.store.models_accounts import LoginSession, UserAccount
from arena.tokens import token_hash

SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
SESSION_TTL = timedelta(days=7)
MAX_SESSIONS = 50  # live sessions one user may hold: a new one ends the oldest beyond that
DERIVED = "derived"  # what login_session.csrf_secret holds: the secret is csrf_of(session id)


def csrf_of(raw: str) -> str:
    """The CSRF secret of session id ``raw``: a keyed hash of it, unlike the stored hash of the id
    (sha256 of the id alone), so neither the database nor the form's token gives the other."""
    return hmac.new(raw.encode(), b"pool-arena csrf", "sha256").hexdigest()


@dataclass(frozen=True)
class SignedIn:
    """A valid session: its user and the CSRF secret its forms carry."""

    user: UserAccount
    csrf: str
    session_id: int


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def start_session(db: Database, user_id: int, ttl: timedelta = SESSION_TTL) -> tuple[str, str]:
    """A new session of ``user_id``: returns the session id (for the cookie; only its hash is
    stored) and its CSRF secret.  Expired sessions are swept at the same time, and the user's
    oldest ones beyond :data:`MAX_SESSIONS` end: a sign-in that succeeds is not rate-limited, and
    each kept a row for 7 days (an outside review signed in 60 times in 15 s: 60 rows)."""
    raw = secrets.token_urlsafe(32)
    csrf = csrf_of(raw)
    now = utcnow()
    with db.session() as session:
        session.exec(delete(LoginSession).where(col(LoginSession.expires_at) < now))
        older = select(LoginSession.id).where(LoginSession.user_id == user_id)
        kept = older.order_by(col(LoginSession.id).desc()).limit(MAX_SESSIONS - 1)
        session.exec(
            delete(LoginSession).where(
                col(LoginSession.user_id) == user_id, col(LoginSession.id).not_in(kept.scalar_subquery())
            )
        )
        row = LoginSession(
            user_id=user_id, session_hash=token_hash(raw), csrf_secret=DERIVED, expires_at=now + ttl
        )
        session.add(row)
    return raw, csrf


def session_user(db: Database, raw: str | None) -> SignedIn | None:
    """The signed-in user of the session cookie ``raw``, or None (no, unknown or expired session)."""
    if not raw or len(raw) > 128:
        return None
    with db.session() as session:
        row = session.exec(select(LoginSession).where(LoginSession.session_hash == token_hash(raw))).first()
        if row is None or _aware(row.expires_at) <= utcnow():
            return None
        user = session.get(UserAccount, row.user_id)
        if user is None or row.id is None:
            return None
        return SignedIn(user, csrf_of(raw), row.id)


def end_session(db: Database, raw: str | None) -> None:
    """Sign out: the session of cookie ``raw`` is deleted (nothing when there is none)."""
    if not raw:
        return
    with db.session() as session:
        session.exec(delete(LoginSession).where(col(LoginSession.session_hash) == token_hash(raw)))


def new_csrf() -> str:
    """A fresh random value for the signed-out double-submit cookie."""
    return secrets.token_urlsafe(32)


def same(expected: str | None, given: str | None) -> bool:
    """Constant-time equality of two CSRF values (False when either is missing)."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
