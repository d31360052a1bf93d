"""the ladder: ladder_rating, ladder_rating_history, ladder_fit

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 18:40:00.000000

``ladder_rating``: a ladder bot version's current OpenSkill belief, updated in the result's
transaction.  ``ladder_rating_history``: the belief after each match, unique per (match,
version).  ``ladder_fit``: the cached Plackett-Luce fit and the stamp it was computed at.
``ix_matchseat_version_match``: a bot version's matches newest first (its charts and pages).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ladder_rating",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournament.id"), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), sa.ForeignKey("botversion.id"), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("last_match_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "bot_version_id"),
    )
    op.create_table(
        "ladder_rating_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournament.id"), nullable=False),
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("match.id"), nullable=False),
        sa.Column("bot_version_id", sa.Integer(), sa.ForeignKey("botversion.id"), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("placing", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id", "bot_version_id"),
    )
    op.create_index("ix_ladder_rating_history_tournament_id", "ladder_rating_history", ["tournament_id"])
    op.create_index("ix_ladder_rating_history_version", "ladder_rating_history", ["bot_version_id", "id"])
    # a bot's recent matches, newest first, without sorting all of them (bot pages, charts)
    op.create_index("ix_matchseat_version_match", "matchseat", ["bot_version_id", "match_id"])
    op.create_table(
        "ladder_fit",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournament.id"), nullable=False),
        sa.Column("stamp", sa.Integer(), nullable=False),
        sa.Column("data", sa.String(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id"),
    )


def downgrade() -> None:
    op.drop_table("ladder_fit")
    op.drop_index("ix_matchseat_version_match", table_name="matchseat")
    op.drop_index("ix_ladder_rating_history_version", table_name="ladder_rating_history")
    op.drop_index("ix_ladder_rating_history_tournament_id", table_name="ladder_rating_history")
    op.drop_table("ladder_rating_history")
    op.drop_table("ladder_rating")
