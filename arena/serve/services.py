"""Background services that ``arena serve`` starts after the web app and stops before it ends.

A service is anything with ``name``, ``start()`` (returns at once; work goes on in a thread or
task of its own), ``stop()`` (asks it to stop and waits, for a bounded time, until it has:
matches in flight are abandoned, and picked up again by the next start) and ``alive()``.
:data:`SERVICES` lists the factories: each is called with the :class:`ServeContext` and
returns a service, or None when it is not wanted in this configuration.  To add one (e.g. a
ladder), append its factory here (one line).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.sandbox.limits import SandboxLimits
from arena.store.db import Database


class BackgroundService(Protocol):
    """What ``arena serve`` runs beside the web app."""

    name: str

    def start(self) -> None:
        """Start working (in the background); return at once."""
        ...

    def stop(self) -> None:
        """Stop and wait until stopped, for a bounded time (idempotent)."""
        ...

    def alive(self) -> bool:
        """True while its work goes on; after :meth:`stop`, True when it did not stop in time
        (then ``arena serve`` ends its process without waiting for it)."""
        ...


@dataclass
class ServeContext:
    """What services share: the database, where matches run, and the sandbox."""

    db: Database
    jobs: int = 1  # local worker processes per service that plays matches
    cluster: str | None = None  # a Dask scheduler address: matches run there instead
    sandbox: SandboxLimits | None = field(default_factory=SandboxLimits)
    log_dir: Path | None = None
    log: Callable[[str], None] = print
    extras: dict[str, Any] = field(default_factory=dict)  # services may leave things for others


ServiceFactory = Callable[[ServeContext], BackgroundService | None]


def _validation(ctx: ServeContext) -> BackgroundService | None:
    from .validator import ValidationService

    return ValidationService(ctx)


def _ladder(ctx: ServeContext) -> BackgroundService | None:
    from arena.ladder.background import service

    return service(ctx)  # the continuous ladder (off with ARENA_LADDER=0)


SERVICES: list[ServiceFactory] = [
    _validation,
    _ladder,
]
