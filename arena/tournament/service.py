"""Creating tournaments from bot names: resolve the field, check the format, store its first
answer (the whole schedule for round robin and gauntlet, round 1 for Swiss and knockout)."""

from __future__ import annotations

import json

from arena.botref import resolve, stored_version
from arena.engine.variants import DEFAULT as DEFAULT_RULES
from arena.engine.variants import Rules
from arena.referee.timecontrol import TimeControl
from arena.sandbox.limits import SandboxLimits
from arena.store.db import Database
from arena.store.models import TOURNAMENT_NAME_LENGTH, BotVersion, Tournament
from arena.store.tournaments import create_tournament, get_tournament

from .formats import CONTINUOUS, REGISTRY, FormatError, make
from .pull import pull, settings_of

# The formats a tournament is created with: not the continuous ones (a 'tournament run --format
# ladder' played on for ever, and 'ladder show' never found it)
FORMATS = tuple(name for name in REGISTRY if name not in CONTINUOUS)
SEEDINGS = ("order", "rating")
RATING_SYSTEM = "pl"  # the rating a knockout is seeded by (over every finished match, as 'arena leaderboard')
# Seeds per table: a fixed schedule is stored whole when the tournament is created, and the
# count is an INTEGER column (PostgreSQL refused 3,000,000,000 with a traceback; SQLite took it
# and was still building the schedule of 6 billion matches 30 s later).
MAX_GAMES = 100_000
MAX_MATCHES = 1_000_000
"""The most matches one tournament may plan (a field of 60 bots at tables of 2, 3 and 4 with
--games 1000 planned 3.6 million; at a match a second that is six weeks of play)."""


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
    rounds: int | None = None,
    seeding: str = "order",
    rules: Rules = DEFAULT_RULES,
) -> Tournament:
    """Store a new tournament of ``bots``: registered names (``name`` or ``name@N``), sample
    names or bot files (see :mod:`arena.botref`; a sample bot is registered under its name, a
    file is stored as ``file:<filename>``).

    ``fmt`` is a name in :data:`arena.tournament.formats.REGISTRY`.  Round robin: every table
    of each of ``table_sizes`` bots, ``games`` seeds per table, each seed under every seat
    rotation.  Gauntlet: ``candidate`` against tables drawn from ``bots``.  Swiss: ``rounds``
    rounds (default ceil(log2(bots))) of one table size.  Knockout: two-player tables, seeded
    by ``seeding`` (``order``: as listed; ``rating``: the ``pl`` rating fitted now over every
    finished tournament match, as ``arena leaderboard`` shows it, unrated bots last).  Every
    match is played under ``rules`` (a variant; its version id is stored on the tournament).
    Bad combinations raise :class:`TournamentConfigError` saying what to change.
    """
    if fmt in CONTINUOUS:
        raise TournamentConfigError(
            f"the {fmt} is not a tournament that ends: run it with 'arena ladder run' "
            f"(a tournament's format is one of {', '.join(FORMATS)})"
        )
    if fmt not in FORMATS:
        raise TournamentConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
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
    if games > MAX_GAMES:
        raise TournamentConfigError(
            f"--games {games} is too many: at most {MAX_GAMES:,} seeds per table (the whole schedule "
            f"is stored when the tournament is created)"
        )
    if name is not None:
        _check_name(name)
    try:
        control = TimeControl(move_time, bank, cpu=cpu_clock)
    except ValueError as exc:
        raise TournamentConfigError(f"{exc}; give --move-time and --bank of 0 or more") from None
    if rounds is not None and fmt != "swiss":
        raise TournamentConfigError(
            f"--rounds is for Swiss tournaments, not {fmt}; leave it out, or use --format swiss"
        )
    if seeding not in SEEDINGS:
        raise TournamentConfigError(f"unknown seeding {seeding!r}; choose {' or '.join(SEEDINGS)}")
    if seeding != "order" and fmt != "knockout":
        raise TournamentConfigError(
            f"--seeding is for knockout tournaments, not {fmt}; leave it out, or use --format knockout"
        )
    if candidate is not None and fmt != "gauntlet":
        raise TournamentConfigError(
            f"--candidate is for gauntlets, not {fmt}; leave it out, or use --format gauntlet"
        )
    refs = list(dict.fromkeys(bots))
    if len(refs) != len(bots):
        twice = next(b for b in refs if bots.count(b) > 1)
        raise TournamentConfigError(f"{twice} is named twice; name each bot only once")
    if fmt == "gauntlet":
        if candidate is None:
            raise TournamentConfigError("a gauntlet needs --candidate BOT: the bot that plays the field")
        if candidate in refs:
            raise TournamentConfigError(
                f"the candidate {candidate} must not also be in the field; leave it out of the bots listed"
            )
        given = [candidate, *refs]
    else:
        given = refs
    versions = [_version(db, b) for b in given]
    ids = [v.id for v in versions]
    if len(set(ids)) != len(ids):
        same = [ref for ref, i in zip(given, ids, strict=True) if ids.count(i) > 1]
        raise TournamentConfigError(f"{' and '.join(same)} are the same bot version; name each version once")
    options: dict[str, object] = {}
    if fmt == "knockout":
        if seeding == "rating":
            options["order"], options["ratings"] = _seeding(db, versions)
        else:
            options["order"] = list(range(len(versions)))
    config: dict[str, object] = {
        "bots": [*([candidate] if candidate else []), *refs],
        "sandbox": sandbox.to_json() if sandbox else None,
        **({"rounds": rounds} if rounds is not None else {}),
        **({"format_options": options, "seeding": seeding} if options else {}),
    }
    sizes = "/".join(str(k) for k in table_sizes)
    label = name or f"{fmt} of {len(versions)} bots, tables of {sizes}"
    t = Tournament(
        name=label, format=fmt, table_sizes=",".join(str(k) for k in table_sizes), games=games, seed=seed,
        move_time=move_time, bank=bank, cpu_clock=cpu_clock, config=json.dumps(config),
    )  # fmt: skip
    try:
        planned = make(fmt, settings_of(t, len(versions))).planned()  # bad settings: refused first
    except FormatError as exc:
        raise TournamentConfigError(str(exc)) from None
    if planned is not None and planned > MAX_MATCHES:
        raise TournamentConfigError(
            f"this tournament would have {planned:,} matches, more than the {MAX_MATCHES:,} one "
            "tournament may have: give fewer --games, fewer table sizes or fewer bots"
        )
    made = create_tournament(
        db,
        name=label,
        fmt=fmt,
        versions=versions,
        table_sizes=list(table_sizes),
        games=games,
        seed=seed,
        control=control,
        schedule=[],
        config=config,
        rules=rules.version,
    )
    assert made.id is not None
    pull(db, made.id)  # the format's first answer: stored now, so 'tournament show' lists it
    return get_tournament(db, made.id)


def _check_name(name: str) -> None:
    """:class:`TournamentConfigError` unless ``name`` can be stored on every backend: at most
    :data:`TOURNAMENT_NAME_LENGTH` characters (PostgreSQL's VARCHAR refused a longer one with a
    traceback, SQLite kept it), no NUL, and text that is UTF-8 (a command-line argument that is
    not arrives with lone surrogates)."""
    if len(name) > TOURNAMENT_NAME_LENGTH:
        raise TournamentConfigError(
            f"the name is {len(name)} characters long; give --name at most {TOURNAMENT_NAME_LENGTH}"
        )
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise TournamentConfigError("the name is not UTF-8 text; give --name in UTF-8") from None
    if "\x00" in name:
        raise TournamentConfigError("the name holds a NUL character; give --name without it")


def _seeding(db: Database, versions: list[BotVersion]) -> tuple[list[int], list[float | None]]:
    """Entries best first by their rating (system :data:`RATING_SYSTEM`) over every finished
    match in the database, what ``arena leaderboard`` shows; unrated entries after them, in the
    order given.  Returns the order and each entry's rating (None: unrated)."""
    from arena.leaderboard import leaderboard
    from arena.store.bots import version_names
    from arena.store.results import finished_matches

    played = sorted({s.bot_version_id for m in finished_matches(db, None) for s in m.seats})
    labels = version_names(db, played)  # the leaderboard's names (name, or name@N for several)
    by_label = {r.bot: r.rating for r in leaderboard(db, system=RATING_SYSTEM, include_removed=True)}
    ratings = [by_label.get(labels[v.id]) if v.id in labels else None for v in versions]
    order = sorted(range(len(versions)), key=lambda i: (ratings[i] is None, -(ratings[i] or 0.0), i))
    return order, ratings


def _version(db: Database, ref: str) -> BotVersion:
    """The stored version a tournament plays for ``ref`` (the one resolution of bot references)."""
    return stored_version(db, resolve(ref, db))
