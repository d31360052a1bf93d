"""matchseat.cpu_time: CPU seconds of a bot's process tree during the match

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 20:10:00.000000

A released migration never changes: databases already at 0001 get the new column here.
(A database made while 0001 briefly carried the column already has it and is left as it is.)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("matchseat")}
    if "cpu_time" not in columns:
        with op.batch_alter_table("matchseat", schema=None) as batch_op:
            batch_op.add_column(sa.Column("cpu_time", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matchseat", schema=None) as batch_op:
        batch_op.drop_column("cpu_time")
