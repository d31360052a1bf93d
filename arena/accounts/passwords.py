"""Password hashing with argon2id (``argon2-cffi``'s defaults: RFC 9106's low-memory profile).

Only the PHC-format hash is ever stored; a password is never logged.  Verification of a login for
an unknown user still spends one hash (:func:`burn`), so response times do not reveal which names
exist.
"""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from .errors import WeakPasswordError

MIN_LENGTH = 8
MAX_LENGTH = 1024  # longer input is refused before hashing (a cheap way to burn CPU otherwise)

_HASHER = PasswordHasher()
_DUMMY = _HASHER.hash("not a password of anybody")


def check_strength(password: str) -> None:
    """Raise :class:`WeakPasswordError` unless ``password`` is 8 to 1024 characters long."""
    if len(password) < MIN_LENGTH:
        raise WeakPasswordError(f"the password is too short: use at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise WeakPasswordError(f"the password is too long: use at most {MAX_LENGTH} characters")


def hash_password(password: str) -> str:
    """The argon2id hash (PHC string) of ``password`` (checked by :func:`check_strength`)."""
    check_strength(password)
    return _HASHER.hash(password)


def verify_password(stored: str, password: str) -> bool:
    """Whether ``password`` matches the stored hash (False for a malformed hash or input)."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        return _HASHER.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def burn(password: str) -> None:
    """Spend the time of one verification (for a login whose user does not exist)."""
    verify_password(_DUMMY, password)
