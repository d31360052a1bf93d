"""Users: create, promote, authenticate, look up.  Usernames are case-insensitive (stored lower)."""

from __future__ import annotations

import re

from sqlmodel import select

from arena.store.db import Database
from arena.store.models_accounts import UserAccount

from .errors import BadUsernameError, UnknownUserError, UserExistsError
from .passwords import burn, hash_password, verify_password

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
    :class:`UserExistsError` when it cannot be made."""
    norm = normalize_username(name)
    hashed = hash_password(password)
    with db.session() as session:
        if session.exec(select(UserAccount).where(UserAccount.username == norm)).first() is not None:
            raise UserExistsError(f"the username {norm!r} is taken: choose another")
        user = UserAccount(username=norm, password_hash=hashed, is_admin=is_admin)
        session.add(user)
        session.flush()
        session.refresh(user)
        return user


def add_admin(db: Database, name: str, password: str) -> tuple[UserAccount, bool]:
    """Make ``name`` an admin with ``password``: a new user, or an existing one promoted and given
    that password.  Returns the user and whether it was created."""
    norm = normalize_username(name)
    hashed = hash_password(password)
    with db.session() as session:
        user = session.exec(select(UserAccount).where(UserAccount.username == norm)).first()
        created = user is None
        if user is None:
            user = UserAccount(username=norm, password_hash=hashed, is_admin=True)
        else:
            user.password_hash = hashed
            user.is_admin = True
        session.add(user)
        session.flush()
        session.refresh(user)
        return user, created


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
