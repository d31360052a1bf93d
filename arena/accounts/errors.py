"""The precise errors of the accounts package (all :class:`AccountError`, a ValueError)."""

from __future__ import annotations


class AccountError(ValueError):
    """A request about accounts that cannot be done; the message says what to do."""


class BadUsernameError(AccountError):
    """A username that breaks the naming rules."""


class WeakPasswordError(AccountError):
    """A password that is too short (or too long)."""


class UserExistsError(AccountError):
    """The username is taken."""


class UnknownUserError(AccountError):
    """No user of that name."""


class PromotionRefusedError(AccountError):
    """An existing non-admin account named for admin without ``--promote``."""


class TooManyTokensError(AccountError):
    """A user already holds the most API tokens allowed (revoke one first)."""
