"""Tables of web accounts and bot submission (revision 0006).  No logic lives here.

Secrets are never stored in clear: a password is kept as its argon2 hash, an API token and a
login session id as their sha256 (``arena.tokens.token_hash``).  The CSRF secret of a session is
random and only useful together with the session cookie, so it is stored as it is.

Status machine of an upload (:class:`UploadStatus`): ``pending`` -> ``validating`` ->
``active`` | ``rejected``; an ``active`` version becomes ``retired`` when a newer one replaces it
(unless its author kept both) or when its owner retires it.  A ``validating`` upload whose server
died is put back to ``pending`` when a server starts again.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from .models import utcnow


class UploadStatus:
    """The closed set of an uploaded version's states."""

    PENDING = "pending"
    VALIDATING = "validating"
    ACTIVE = "active"
    REJECTED = "rejected"
    RETIRED = "retired"
    ALL = (PENDING, VALIDATING, ACTIVE, REJECTED, RETIRED)


class UserAccount(SQLModel, table=True):
    """A person who signs in on the web: a unique name and an argon2 password hash."""

    __tablename__ = "user_account"

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(index=True, unique=True, max_length=32)
    password_hash: str = Field(max_length=255)  # argon2id, PHC string format
    is_admin: bool = Field(default=False, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(default_factory=utcnow)


class ApiToken(SQLModel, table=True):
    """A personal API token: only the sha256 of the token is kept (it is shown once)."""

    __tablename__ = "api_token"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    name: str = Field(max_length=64)
    token_hash: str = Field(index=True, unique=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow)
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class LoginSession(SQLModel, table=True):
    """A signed-in browser: the sha256 of its session cookie, its CSRF secret and its expiry."""

    __tablename__ = "login_session"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    session_hash: str = Field(index=True, unique=True, max_length=64)
    csrf_secret: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime = Field(index=True)


class BotOwner(SQLModel, table=True):
    """Who owns a bot (bots registered from the CLI have no row: only an admin acts on them)."""

    __tablename__ = "bot_owner"

    bot_id: int = Field(foreign_key="bot.id", primary_key=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)


class BotUpload(SQLModel, table=True):
    """One uploaded version and its validation: status, reason, stderr tail, the matches played."""

    __tablename__ = "bot_upload"

    id: int | None = Field(default=None, primary_key=True)
    bot_version_id: int = Field(foreign_key="botversion.id", index=True, unique=True)
    user_id: int = Field(foreign_key="user_account.id", index=True)
    status: str = Field(default=UploadStatus.PENDING, max_length=16, index=True)
    keep_previous: bool = Field(default=False, sa_column_kwargs={"server_default": "0"})
    reason: str | None = None  # why it was rejected (or retired)
    stderr_tail: str | None = None  # the bot's last stderr lines when it forfeited validation
    match_ids: str = "[]"  # JSON list: the validation matches played (ids of table match)
    attempts: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None
