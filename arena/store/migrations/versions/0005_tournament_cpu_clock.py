"""tournament.cpu_clock: the time control's clock is a column beside move_time and bank

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 17:00:00.000000

Before, a tournament's time control was stored half in columns (``move_time``, ``bank``) and half
in its JSON ``config`` (key ``cpu_clock``).  The upgrade moves the flag out of the config into a
boolean column (false where the config had no such key) and removes the key; the downgrade puts
it back into every config and drops the column.  A config that is not a JSON object is left
untouched (its tournament gets the wall clock, as the old code read it).
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

KEY = "cpu_clock"
TOURNAMENT = sa.table(
    "tournament",
    sa.column("id", sa.Integer()),
    sa.column("config", sa.String()),
    sa.column("cpu_clock", sa.Boolean()),
)


def _config(raw: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(raw or "{}")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def upgrade() -> None:
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.add_column(sa.Column(KEY, sa.Boolean(), nullable=False, server_default="0"))
    bind = op.get_bind()
    for tid, raw in bind.execute(sa.select(TOURNAMENT.c.id, TOURNAMENT.c.config)).all():
        config = _config(raw)
        if config is None or KEY not in config:
            continue
        cpu = bool(config.pop(KEY))
        bind.execute(
            TOURNAMENT.update().where(TOURNAMENT.c.id == tid).values(config=json.dumps(config), cpu_clock=cpu)
        )


def downgrade() -> None:
    bind = op.get_bind()
    for tid, raw, cpu in bind.execute(
        sa.select(TOURNAMENT.c.id, TOURNAMENT.c.config, TOURNAMENT.c.cpu_clock)
    ).all():
        config = _config(raw)
        if config is None:
            continue
        config[KEY] = bool(cpu)
        bind.execute(TOURNAMENT.update().where(TOURNAMENT.c.id == tid).values(config=json.dumps(config)))
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.drop_column(KEY)
