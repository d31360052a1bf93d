"""Creating tournaments from bot names: resolve the field, build the schedule, store it."""

from __future__ import annotations

from arena.botref import resolve, stored_version
from arena.sandbox.limits import SandboxLimits
from arena.store.db import Database
from arena.store.models import BotVersion, Tournament
from arena.store.tournaments import create_tournament

from .pairing import gauntlet, round_robin

FORMATS = ("round-robin", "gauntlet")


class TournamentConfigError(ValueError):
    """A tournament that cannot be set up as asked."""


def create(
    db: Database,
    bots: list[str],
    *,
    fmt: str = "round-robin",
    table_sizes: tuple[int, ...] = (2,),
    games: int = 2,
    seed: int = 1,
    move_time: float = 1.0,
    bank: float = 10.0,
    name: str | None = None,
    candidate: str | None = None,
    sandbox: SandboxLimits | None = None,
    cpu_clock: bool = False,
) -> Tournament:
    """Store a new tournament of ``bots``: registered names (``name`` or ``name@N``), sample
    names or bot files (see :mod:`arena.botref`; a sample bot is registered under its name, a
    file is stored as ``file:<filename>``).

    Round robin: every table of each of ``table_sizes`` bots, ``games`` seeds per table, each
    seed under every seat rotation.  Gauntlet: ``candidate`` against tables drawn from ``bots``.
    """
    if fmt not in FORMATS:
        raise TournamentConfigError(f"unknown format {fmt!r}; choose {' or '.join(FORMATS)}")
    if (
        not table_sizes
        or any(not 2 <= k <= 4 for k in table_sizes)
        or len(set(table_sizes)) != len(table_sizes)
    ):
        raise TournamentConfigError(
            f"table sizes must be distinct values of 2, 3 and 4, got {list(table_sizes)}"
        )
    if games < 1:
        raise TournamentConfigError("games must be at least 1")
    refs = list(dict.fromkeys(bots))
    if len(refs) != len(bots):
        raise TournamentConfigError("each bot may be named only once")
    if fmt == "gauntlet":
        if candidate is None:
            raise TournamentConfigError("a gauntlet needs --candidate")
        if candidate in refs:
            raise TournamentConfigError("the candidate must not also be in the field")
        versions = [_version(db, candidate)] + [_version(db, b) for b in refs]
        n_field = len(refs)
    else:
        versions = [_version(db, b) for b in refs]
        n_field = len(versions)
    plan: list[tuple[int, str, tuple[int, ...]]] = []
    for k in table_sizes:
        need = k - 1 if fmt == "gauntlet" else k
        if n_field < need:
            raise TournamentConfigError(
                f"tables of {k} need at least {need} bots in the field, got {n_field}"
            )
        part = (
            gauntlet(n_field, k, games, seed)
            if fmt == "gauntlet"
            else round_robin(n_field, k, games, seed + k)
        )
        plan += [(p.seed, f"{k}p-{p.group}", p.seating) for p in part]
    ids = [v.id for v in versions]
    if len(set(ids)) != len(ids):
        raise TournamentConfigError("the same bot version appears twice")
    sizes = "/".join(str(k) for k in table_sizes)
    label = name or f"{fmt} of {len(versions)} bots, tables of {sizes}"
    return create_tournament(
        db,
        name=label,
        fmt=fmt,
        versions=versions,
        table_sizes=list(table_sizes),
        games=games,
        seed=seed,
        move_time=move_time,
        bank=bank,
        schedule=plan,
        config={
            "bots": [*([candidate] if candidate else []), *refs],
            "sandbox": sandbox.to_json() if sandbox else None,
            "cpu_clock": cpu_clock,
        },
    )


def _version(db: Database, ref: str) -> BotVersion:
    """The stored version a tournament plays for ``ref`` (the one resolution of bot references)."""
    return stored_version(db, resolve(ref, db))
