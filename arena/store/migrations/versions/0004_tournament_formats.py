"""formats that pull: match.round, tournamententry.position, tournament_bye, tournament.rules

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 16:30:00.000000

``match.round``: the round a format handed the match out in (0 for formats without rounds).
``tournamententry.position``: the entry's index in the
field (registration order), which formats pair by (NULL in tournaments made before).
``tournament_bye``: an entry that sat out a round of a Swiss or knockout tournament, and what it
scored.  ``tournament.rules``: the rules variant a tournament is played under (NULL: the
standard rules).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(sa.Column("round", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("tournamententry", schema=None) as batch_op:
        batch_op.add_column(sa.Column("position", sa.Integer(), nullable=True))
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rules", sa.String(length=32), nullable=True))
    op.create_table(
        "tournament_bye",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournament.id"]),
        sa.ForeignKeyConstraint(["bot_version_id"], ["botversion.id"]),
        sa.PrimaryKeyConstraint("tournament_id", "round", "bot_version_id"),
    )


def downgrade() -> None:
    op.drop_table("tournament_bye")
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.drop_column("rules")
    with op.batch_alter_table("tournamententry", schema=None) as batch_op:
        batch_op.drop_column("position")
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_column("round")
