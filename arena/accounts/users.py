"""Users: create, promote, authenticate, look up.  Usernames are case-insensitive (stored lower)."""

from __future__ import annotations

import re
from typing import NamedTuple

from sqlmodel import col, select

from arena.store.db import Database
from arena.store.models import utcnow
from arena.store.models_accounts import ApiToken, LoginSession, UserAccount

from .errors import BadUsernameError, PromotionRefusedError, UnknownUserError, UserExistsError
from .passwords import burn, check_strength, hash_password, verify_password

USERNAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{2,31}\Z")


def normalize_username(name: str) -> str:
    """``name`` lower-cased and checked: 3-32 letters, digits, '_' or '-', first a letter or digit."""
    norm = name.strip().lower()
    if not USERNAME_RE.match(norm):
        raise BadUsernameError(
            f"bad username {name!r}: use 3-32 letters, digits, '_' or '-' (first a letter or digit)"
        )
    return norm


def find_user(db: Database, name: str) -> UserAccount | None:
    """The user called ``name`` (any case), or None."""
    try:
        norm = normalize_username(name)
    except BadUsernameError:
        return None
    with db.session() as session:
        return session.exec(select(UserAccount).where(UserAccount.username == norm)).first()


def get_user(db: Database, user_id: int) -> UserAccount | None:
    """The user with id ``user_id``, or None."""
    with db.session() as session:
        return session.get(UserAccount, user_id)


def create_user(db: Database, name: str, password: str, *, is_admin: bool = False) -> UserAccount:
    """A new user; :class:`BadUsernameError`, :class:`WeakPasswordError` or
    :class:`UserExistsError` when it cannot be made.

    A taken name is refused before the password is hashed: the sign-up page does not count a
    refused sign-up against its rate limit, so each one must cost no argon2 hash (an outside
    review's sign-ups with a taken name were answered without end, one hash each)."""
    norm = normalize_username(name)
    check_strength(password)
    if find_user(db, norm) is not None:
        raise UserExistsError(f"the username {norm!r} is taken: choose another")
    hashed = hash_password(password)
    with db.session() as session:
        if session.exec(select(UserAccount).where(UserAccount.username == norm)).first() is not None:
            raise UserExistsError(f"the username {norm!r} is taken: choose another")
        user = UserAccount(username=norm, password_hash=hashed, is_admin=is_admin)
        session.add(user)
        session.flush()
        session.refresh(user)
        return user


class AdminMade(NamedTuple):
    """What :func:`add_admin` did: the admin, whether it was created, and for an existing
    account how many of its sign-in sessions it ended and API tokens it revoked."""

    user: UserAccount
    created: bool
    sessions_ended: int = 0
    tokens_revoked: int = 0


def add_admin(db: Database, name: str, password: str, *, promote: bool = False) -> AdminMade:
    """Make ``name`` an admin with ``password``: a new user, or an existing one given that password.

    An existing account that is not an admin yet is promoted only with ``promote`` (else
    :class:`PromotionRefusedError`: somebody may have signed up with that name first).  An
    existing account's sessions are all ended and its API tokens revoked, in the same
    transaction: whoever held them before the password was set holds nothing after.
    """
    norm = normalize_username(name)
    hashed = hash_password(password)
    with db.session() as session:
        user = session.exec(select(UserAccount).where(UserAccount.username == norm)).first()
        if user is None:
            user = UserAccount(username=norm, password_hash=hashed, is_admin=True)
            session.add(user)
            session.flush()
            session.refresh(user)
            return AdminMade(user, True)
        if not user.is_admin and not promote:
            raise PromotionRefusedError(
                f"{norm!r} is an existing account that is not an admin (anyone may have signed up with "
                "that name): check who it is, then run again with --promote to make it an admin, or "
                "choose another name"
            )
        user.password_hash = hashed
        user.is_admin = True
        session.add(user)
        ended = 0
        for row in session.exec(select(LoginSession).where(LoginSession.user_id == user.id)).all():
            session.delete(row)
            ended += 1
        revoked = 0
        tokens = select(ApiToken).where(ApiToken.user_id == user.id, col(ApiToken.revoked_at).is_(None))
        for token in session.exec(tokens).all():
            token.revoked_at = utcnow()
            session.add(token)
            revoked += 1
        session.flush()
        session.refresh(user)
        return AdminMade(user, False, ended, revoked)


def require_user(db: Database, name: str) -> UserAccount:
    """The user called ``name``; :class:`UnknownUserError` when there is none."""
    user = find_user(db, name)
    if user is None:
        raise UnknownUserError(f"no user named {name!r}; make one with 'arena users add-admin' or sign up")
    return user


def authenticate(db: Database, name: str, password: str) -> UserAccount | None:
    """The user when ``password`` is theirs, else None (same work whether the user exists or not)."""
    user = find_user(db, name)
    if user is None:
        burn(password)
        return None
    return user if verify_password(user.password_hash, password) else None
