"""Repeating a short database operation that a dropped connection interrupted.

A pooled connection the server dropped while it sat idle is replaced before use (``pool_pre_ping``,
:mod:`arena.store.db`); one dropped *during* a statement (PostgreSQL restarted or
``pg_terminate_backend``; SQLite busy beyond its wait) fails that statement with an
:class:`~sqlalchemy.exc.OperationalError`, and the pool then discards the connection.  For an
operation that is safe to run again, a read or one transaction that rolled back, running it again
on a fresh connection is the right answer to such a blip; :func:`retried` does that a few times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError

T = TypeVar("T")


def transient(exc: BaseException) -> bool:
    """True for a failure that a fresh connection may not have: an ``OperationalError`` (the
    connection dropped, the server shut down, the database busy) or any driver error that
    invalidated its connection."""
    return isinstance(exc, OperationalError) or (isinstance(exc, DBAPIError) and exc.connection_invalidated)


def failure_line(exc: BaseException) -> str:
    """The first line of what the database (its driver) said, for an error message."""
    lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def retried(operation: Callable[[], T], *, attempts: int = 3, pause: float = 0.5) -> T:
    """``operation()``, called again (after ``pause`` seconds) when it fails :func:`transient`ly,
    ``attempts`` calls in all.  Only for operations that are safe to repeat.  The last failure,
    and any other exception at once, propagates unchanged."""
    for attempt in range(1, attempts + 1):
        try:
            return operation()
        except DBAPIError as exc:
            if attempt == attempts or not transient(exc):
                raise
        time.sleep(pause)
    raise AssertionError("unreachable")  # the loop returns or raises
