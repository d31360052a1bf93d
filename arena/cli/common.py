"""Helpers shared by the CLI sub-apps: opening the database, turning errors into messages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from arena.ratings.errors import RatingError
from arena.sandbox import BotLaunchError, SandboxUnavailableError
from arena.store.db import Database, StoreError

EXPECTED_ERRORS = (StoreError, BotLaunchError, RatingError, SandboxUnavailableError, ValueError)


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextmanager
def database() -> Iterator[Database]:
    """Open (and migrate) the database; expected errors become a clear message and exit 1."""
    try:
        db = Database()
    except StoreError as exc:
        raise fail(str(exc)) from None
    try:
        yield db
    except EXPECTED_ERRORS as exc:
        raise fail(str(exc)) from None
    finally:
        db.close()
