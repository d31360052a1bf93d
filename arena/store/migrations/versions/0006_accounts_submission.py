"""web accounts and submission: user_account, api_token, login_session, bot_owner, bot_upload

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 18:30:00.000000

``user_account``: a web user (argon2 password hash, admin flag).  ``api_token``: personal API
tokens, sha256 only.  ``login_session``: signed-in browsers (sha256 of the cookie, CSRF secret,
expiry).  ``bot_owner``: a bot's owning user.  ``bot_upload``: an uploaded version's validation
(status pending/validating/active/rejected/retired, reason, stderr tail, match ids).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_account",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=32), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_user_account_username", "user_account", ["username"], unique=True)
    op.create_table(
        "api_token",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["user_account.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_api_token_user_id", "api_token", ["user_id"])
    op.create_index("ix_api_token_token_hash", "api_token", ["token_hash"], unique=True)
    op.create_table(
        "login_session",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("session_hash", sa.String(length=64), nullable=False),
        sa.Column("csrf_secret", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["user_account.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_login_session_user_id", "login_session", ["user_id"])
    op.create_index("ix_login_session_session_hash", "login_session", ["session_hash"], unique=True)
    op.create_index("ix_login_session_expires_at", "login_session", ["expires_at"])
    op.create_table(
        "bot_owner",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bot.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["user_account.id"]),
        sa.PrimaryKeyConstraint("bot_id"),
    )
    op.create_index("ix_bot_owner_user_id", "bot_owner", ["user_id"])
    op.create_table(
        "bot_upload",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("keep_previous", sa.Boolean(), nullable=False, server_default="0"),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("stderr_tail", sa.String(), nullable=True),
        sa.Column("match_ids", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["bot_version_id"], ["botversion.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["user_account.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_bot_upload_bot_version_id", "bot_upload", ["bot_version_id"], unique=True)
    op.create_index("ix_bot_upload_user_id", "bot_upload", ["user_id"])
    op.create_index("ix_bot_upload_status", "bot_upload", ["status"])


def downgrade() -> None:
    op.drop_table("bot_upload")
    op.drop_table("bot_owner")
    op.drop_table("login_session")
    op.drop_table("api_token")
    op.drop_table("user_account")
