"""Personal API tokens: ``arena_`` + 43 random characters, shown once; only the sha256 is stored."""

from __future__ import annotations

import secrets

from sqlmodel import col, func, select

from arena.accounts.errors import TooManyTokensError
from arena.safetext import printable
from arena.store.db import Database
from arena.store.models import utcnow
from arena.store.models_accounts import ApiToken, UserAccount
from arena.tokens import token_hash

PREFIX = "arena_"


MAX_TOKENS = 20  # live (not revoked) tokens one user may hold


def new_token(db: Database, user_id: int, name: str = "cli") -> str:
    """Make a token for ``user_id`` and return it (the only time it exists in clear);
    :class:`TooManyTokensError` when the user holds :data:`MAX_TOKENS` live ones already (an
    outside review made 300 in 4 s: a row each, a line each on the account page, no bound).

    ``name``, the label, is stored as :func:`~arena.safetext.printable` text, cut to 64
    characters: a NUL (from the account page's form) made PostgreSQL refuse the row (a 500
    "Internal error"; SQLite stored it), and a ``--label`` that is not UTF-8 stopped ``arena
    users token`` with a codec error."""
    raw = PREFIX + secrets.token_urlsafe(32)
    with db.session() as session:
        live = session.exec(
            select(func.count())
            .select_from(ApiToken)
            .where(ApiToken.user_id == user_id, col(ApiToken.revoked_at).is_(None))
        ).one()
        if live >= MAX_TOKENS:
            raise TooManyTokensError(
                f"you have {live} API tokens, the most one user may hold: revoke one you no longer "
                "use first (on your account page)"
            )
        label = printable(name)[:64] or "token"
        session.add(ApiToken(user_id=user_id, name=label, token_hash=token_hash(raw)))
    return raw


def token_user(db: Database, raw: str | None) -> UserAccount | None:
    """The user a presented token belongs to (and its last use noted), or None."""
    if not raw or not raw.startswith(PREFIX) or len(raw) > 128:
        return None
    with db.session() as session:
        row = session.exec(
            select(ApiToken).where(ApiToken.token_hash == token_hash(raw), col(ApiToken.revoked_at).is_(None))
        ).first()
        if row is None:
            return None
        row.last_used_at = utcnow()
        session.add(row)
        return session.get(UserAccount, row.user_id)


def list_tokens(db: Database, user_id: int) -> list[ApiToken]:
    """The user's tokens that are not revoked, newest first (hashes only)."""
    with db.session() as session:
        return list(
            session.exec(
                select(ApiToken)
                .where(ApiToken.user_id == user_id, col(ApiToken.revoked_at).is_(None))
                .order_by(col(ApiToken.id).desc())
            ).all()
        )


def revoke_token(db: Database, user_id: int, token_id: int) -> bool:
    """Revoke the user's token ``token_id``; False when it is not theirs or already revoked."""
    with db.session() as session:
        row = session.get(ApiToken, token_id)
        if row is None or row.user_id != user_id or row.revoked_at is not None:
            return False
        row.revoked_at = utcnow()
        session.add(row)
        return True
