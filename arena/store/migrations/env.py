"""Alembic environment: migrations run programmatically from arena.store.db (never by hand)."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import arena.store.models  # noqa: F401  (registers the tables)

config = context.config
connection = config.attributes.get("connection")
target_metadata = SQLModel.metadata

if connection is None:  # a developer: alembic -x url=sqlite:///x.db revision --autogenerate -m ...
    from sqlalchemy import create_engine

    url = context.get_x_argument(as_dictionary=True).get("url", "sqlite:///:memory:")
    with create_engine(url).connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
