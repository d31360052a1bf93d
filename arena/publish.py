"""Standing leaderboards: a TOML definition in ``leaderboards/`` run as a tournament, its
standings written next to it as Markdown and JSON."""

from __future__ import annotations

import contextlib
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botref import sample_bots
from arena.engine.chance import SEED_LIMIT
from arena.leaderboard import MIN_GAMES, LeaderRow, leaderboard, store_ratings, to_json, to_markdown
from arena.store.bots import DuplicateUploadError, add_bot, newest_version, sha256_file
from arena.store.db import Database
from arena.tournament.runner import ProgressFn, run_tournament
from arena.tournament.service import TournamentConfigError, create

REPO = Path(__file__).resolve().parent.parent
LEADERBOARDS = REPO / "leaderboards"


class LeaderboardDefinitionError(ValueError):
    """A leaderboard TOML that is missing or wrong."""


@dataclass(frozen=True)
class Definition:
    """A standing leaderboard: which bots, table sizes, games and time control, and the games a
    bot needs to be ranked (fewer: provisional)."""

    name: str
    title: str
    bots: dict[str, Path]
    tables: tuple[int, ...]
    games: int
    move_time: float
    bank: float
    seed: int
    min_games: int = MIN_GAMES


def load_definition(name: str, folder: Path = LEADERBOARDS) -> Definition:
    """Read ``folder/<name>.toml``; bots are sample names (``greedy``, ``greedy-naive``: see
    :func:`arena.botref.sample_bots`) or paths relative to the TOML file."""
    path = folder / f"{name}.toml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.toml"))) or "none"
        raise LeaderboardDefinitionError(f"no leaderboard {name!r} in {folder} (known: {known})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise LeaderboardDefinitionError(f"{path}: {exc}") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise LeaderboardDefinitionError(
            f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"a definition has {', '.join(KEYS)}"
        )
    bots: dict[str, Path] = {}
    samples = sample_bots()
    entries = data.get("bots")
    if not isinstance(entries, list) or len(entries) < 2:
        raise LeaderboardDefinitionError(f"{path}: 'bots' must list at least two bots")
    for entry in entries:
        candidate = path.parent / str(entry)
        if candidate.is_file():
            bot, file = candidate.stem.removesuffix("_bot"), candidate
        elif str(entry) in samples:
            bot, file = str(entry), samples[str(entry)]
        else:
            raise LeaderboardDefinitionError(
                f"{path}: bot {entry!r} is neither a sample bot ({', '.join(samples)}) nor a file "
                "(a path is read relative to the TOML file)"
            )
        if bot in bots:  # it was dropped silently (and two copies of one left a field of one)
            raise LeaderboardDefinitionError(f"{path}: 'bots' lists {bot!r} twice; list each bot once")
        bots[bot] = file
    tables = data.get("tables", [2])
    if not isinstance(tables, list) or not tables or not all(_whole(k) and 2 <= k <= 4 for k in tables):
        raise LeaderboardDefinitionError(
            f"{path}: 'tables' must list players per table, each 2, 3 or 4 (e.g. [2] or [2, 4]), "
            f"got {tables!r}"
        )
    if len(set(tables)) != len(tables):
        raise LeaderboardDefinitionError(f"{path}: 'tables' lists a size twice ({tables!r}); list each once")
    if max(tables) > len(bots):
        raise LeaderboardDefinitionError(
            f"{path}: 'tables' has tables of {max(tables)} but 'bots' lists {len(bots)}; "
            f"list more bots or smaller tables"
        )
    title = data.get("title", name)
    if not isinstance(title, str):
        raise LeaderboardDefinitionError(f"{path}: 'title' must be text, got {title!r}")
    return Definition(
        name=name,
        title=title,
        bots=bots,
        tables=tuple(tables),
        games=_number(path, data, "games", 2, whole=True, least=1),
        move_time=_number(path, data, "move_time", 1.0, least=0.001),
        bank=_number(path, data, "bank", 10.0, least=0.0),
        seed=_number(path, data, "seed", 1, whole=True, least=0, below=SEED_LIMIT),
        min_games=_number(path, data, "min_games", MIN_GAMES, whole=True, least=0),
    )


KEYS = ("title", "bots", "tables", "games", "move_time", "bank", "seed", "min_games")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(
    path: Path,
    data: dict[str, object],
    key: str,
    default: float,
    *,
    whole: bool = False,
    least: float,
    below: float = math.inf,
) -> Any:
    """``data[key]`` (``default`` when absent), checked: a TOML integer when ``whole`` (else any
    number), at least ``least`` and below ``below``; :class:`LeaderboardDefinitionError` naming the
    file, the key and the value otherwise (before anything is played)."""
    value = data.get(key, default)
    kind = "a whole number" if whole else "a number"
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if whole and not isinstance(number, int):
        number = None
    if number is None or not least <= number < below:  # nan fails the comparison too
        # a whole bound exactly: seed's 2^63 read 'below 9.22337e+18', which names no number
        limit = f"{below:g}" if isinstance(below, float) else str(below)
        bound = f"{least:g} or more" + (f" and below {limit}" if below != math.inf else "")
        raise LeaderboardDefinitionError(f"{path}: {key!r} must be {kind}, {bound}; got {value!r}")
    return value


def _check_registration(db: Database, toml: Path, bot: str, file: Path, samples: dict[str, Path]) -> None:
    """A bot file of a definition is registered under its name (the file's name without
    ``_bot`` and the suffix), a new version when it changed: refuse a file that would take a
    sample bot's name (unless it is that sample's file) or the name of a registered bot of another
    file (publishing silently replaced the sample ``greedy``, or a user's own bot, with it)."""
    sample = samples.get(bot)
    if sample is not None:
        if file.resolve() == sample.resolve() or sha256_file(file) == sha256_file(sample):
            return
        raise LeaderboardDefinitionError(
            f"{toml}: the file {file} would be registered as {bot!r}, the name of a sample bot "
            f"(bots/{sample.name}); rename the file (its name without '_bot' and the suffix names "
            f"the bot), or list the sample as {bot!r}"
        )
    latest = newest_version(db, bot)
    if latest is not None and latest.filename != file.name:
        raise LeaderboardDefinitionError(
            f"{toml}: the file {file} would be registered as {bot!r}, but {bot!r} is a registered "
            f"bot of another file ({latest.filename}); rename the file, or see 'arena bots show {bot}'"
        )


def publish(
    db: Database,
    name: str,
    *,
    jobs: int | None = None,
    progress: ProgressFn | None = None,
    folder: Path = LEADERBOARDS,
    shown: str | None = None,
) -> tuple[list[LeaderRow], Path, Path]:
    """Run the leaderboard's tournament and write ``<name>.md`` and ``<name>.json`` beside it;
    their "Reproduce" line names the definition as ``shown`` (default ``name``: one in
    ``leaderboards/``; give the path of a definition kept elsewhere)."""
    d = load_definition(name, folder)
    samples = sample_bots()
    for bot, file in d.bots.items():
        _check_registration(db, folder / f"{name}.toml", bot, file, samples)
    for bot, file in d.bots.items():
        with contextlib.suppress(DuplicateUploadError):
            add_bot(db, bot, file)
    try:
        t = create(
            db,
            list(d.bots),
            table_sizes=d.tables,
            games=d.games,
            seed=d.seed,
            move_time=d.move_time,
            bank=d.bank,
            name=f"leaderboard {name}",
        )
    except TournamentConfigError as exc:  # what the definition's own checks did not catch
        raise LeaderboardDefinitionError(f"{folder / f'{name}.toml'}: {exc}") from None
    assert t.id is not None
    run_tournament(db, t.id, jobs=jobs, progress=progress)
    rows = leaderboard(db, tournament_id=t.id, system="pl", min_games=d.min_games)
    store_ratings(db, rows, "pl", f"leaderboard:{name}", tournament_id=t.id)
    tables = "/".join(str(k) for k in d.tables)
    notes = [
        f"Round robin, tables of {tables} players, {d.games} seed(s) per table, every seat rotation "
        f"(duplicate dice), {d.move_time:g}s per decision + {d.bank:g}s bank, tournament seed {d.seed}.",
        "Bots: " + ", ".join(f"{b} (sha256 {sha256_file(f)[:12]})" for b, f in d.bots.items()) + ".",
        f"Ranked by the lower bound of the 95% interval; bots with fewer than {d.min_games} games "
        "are listed apart as provisional.",
        f"Reproduce: `arena leaderboard publish {shown or name}` (every match seed follows from the "
        "tournament "
        "seed, and bots draw their randomness from their seat's bot seed, so a rerun plays the same "
        "games as long as no bot runs out of time).",
    ]
    md = folder / f"{name}.md"
    js = folder / f"{name}.json"
    md.write_text(to_markdown(rows, "pl", d.title, notes, d.min_games), encoding="utf-8")
    meta = {"leaderboard": name, "title": d.title, "notes": notes, "tournament_seed": d.seed}
    js.write_text(json.dumps(to_json(rows, "pl", meta, d.min_games), indent=2) + "\n", encoding="utf-8")
    return rows, md, js
