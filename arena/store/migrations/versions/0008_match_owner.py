"""match_owner: the process running a stand-alone match

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 19:20:00.000000

A stand-alone match (``arena match``, ``arena play``, a web game, an upload's validation) is
stored ``running`` by the process that plays it and finished by the same process; nothing else
ever finishes it.  ``match_owner`` names that process (host, pid and the pid's start time), so a
match whose process was killed outright (``kill -9``) can be told apart from one still being
played, and marked failed (:mod:`arena.store.owners`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "match_owner",
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("match.id"), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("pid_start", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("match_id"),
    )


def downgrade() -> None:
    op.drop_table("match_owner")
