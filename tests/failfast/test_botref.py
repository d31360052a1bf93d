"""One way to name a bot everywhere: a path, a registered bot (NAME or NAME@N) or a sample name,
for ``arena match``, ``arena evaluate`` and tournaments alike."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import select

from arena.botref import BotRefError, comeback, resolve, sample_bots
from arena.store.bots import add_bot, add_remote_bot, remove_bot, version_names
from arena.store.db import Database
from arena.store.models import TournamentEntry

from .helpers import REPO, cli

GREEDY = REPO / "bots" / "greedy_bot.py"


@pytest.fixture
def db(home: Path) -> Iterator[Database]:
    """The test's database (closing it twice is harmless: tests close it before running the CLI)."""
    database = Database()
    yield database
    database.close()


def test_every_sample_bot_is_a_name() -> None:
    assert set(sample_bots()) >= {"greedy", "invader", "random", "search"}
    bot = resolve("invader")
    assert bot.kind == "sample" and bot.path == REPO / "bots" / "invader_bot.py"


def test_match_takes_samples_registered_names_and_versions(db: Database, home: Path, tmp_path: Path) -> None:
    add_bot(db, "mine", GREEDY)
    db.close()
    run = cli("match", "invader", "mine@1", "--seed", "3", "--no-sandbox", home=home)
    assert "invader vs mine@1" in run.stderr
    run = cli("match", "mine", "random", "--seed", "4", "--no-sandbox", home=home)
    assert "mine vs random" in run.stderr


def test_evaluate_takes_registered_names(db: Database, home: Path) -> None:
    add_bot(db, "mine", GREEDY)
    db.close()
    run = cli(
        "evaluate", "mine", "--vs", "invader", "--games", "2", "--move-time", "0.5", "--json", home=home
    )
    report = json.loads(run.stdout)
    assert report["candidate"] == "mine" and report["games"] == 2, report


def test_tournaments_take_paths_and_samples(db: Database, home: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    shutil.copy(GREEDY, mine)
    run = cli("tournament", "create", str(mine), "random", "--games", "1", "--seed", "1", home=home)
    assert "tournament 1" in run.stderr
    with db.session() as session:
        ids = [e.bot_version_id for e in session.exec(select(TournamentEntry)).all()]
    assert sorted(version_names(db, ids).values()) == ["file:mine.py", "random"]


def test_a_name_that_is_nothing_says_what_was_tried(db: Database, home: Path, tmp_path: Path) -> None:
    add_bot(db, "mine", GREEDY)
    add_bot(db, "greedy", GREEDY)  # registered, and close to greedy_naive
    db.close()
    run = cli("match", "mien", "random", home=home, code=2)
    assert "error: no bot 'mien': not a file: no " in run.stderr
    assert "not a registered bot in the database sqlite:///" in run.stderr
    assert run.stderr.rstrip().endswith("Did you mean mine?"), run.stderr  # one hint, at the end
    assert run.stderr.lower().count("did you mean") == 1, run.stderr
    assert "not a sample bot (greedy, greedy-naive, invader, random, search)" in run.stderr
    run = cli("tournament", "create", "mien", "random", home=home, code=2)  # a usage error, as in match
    assert "no bot 'mien'" in run.stderr and "not a sample bot" in run.stderr
    run = cli("evaluate", "mien", "--vs", "random", home=home, code=2)
    assert "no bot 'mien'" in run.stderr and "Did you mean mine?" in run.stderr
    # a sample's file name (greedy_naive_bot.py) for its bot name: the sample is suggested, once
    # (the registered greedy was suggested too, inside the database's clause)
    run = cli("match", "greedy_naive", "random", home=home, code=2)
    assert run.stderr.rstrip().endswith("Did you mean greedy-naive?"), run.stderr
    assert run.stderr.lower().count("did you mean") == 1, run.stderr
    run = cli("match", "serch", "random", home=home, code=2)
    assert run.stderr.rstrip().endswith("Did you mean search?"), run.stderr
    run = cli("match", "mine@7", "random", home=home, code=2)
    assert "mine has no version 7" in run.stderr
    run = cli("match", str(tmp_path / "nope.py"), "random", home=home, code=2)
    assert f"{tmp_path / 'nope.py'}: no such file" in run.stderr


def test_remote_and_removed_bots_are_refused(db: Database, home: Path) -> None:
    add_remote_bot(db, "faraway")
    add_bot(db, "gone", GREEDY)
    remove_bot(db, "gone")
    with pytest.raises(BotRefError, match="faraway is a remote bot"):
        resolve("faraway", db)
    db.close()
    run = cli("match", "gone", "random", home=home, code=2)
    # the hint names the file that brings it back: its last version's stored copy
    found = re.search(r"gone was removed; 'arena bots add gone (\S+)' brings it back", run.stderr)
    assert found is not None, run.stderr
    assert Path(home, found.group(1)).read_bytes() == GREEDY.read_bytes()
    run = cli("tournament", "run", "gone", "random", home=home, code=1)
    assert run.stderr.count("in the database") + run.stderr.count("looked in the database") == 1, run.stderr
    back = cli("bots", "add", "gone", found.group(1), "--no-check", home=home)  # as printed, from home
    assert "added gone version 1" in back.stdout, back.stdout
    # a removed sample name with no version of its own: the sample's file
    db = Database(f"sqlite:///{home / 'arena.db'}")
    try:
        hint = comeback(db, "greedy")
        assert hint.startswith("'arena bots add greedy ") and hint.endswith("'"), hint
        assert Path(hint.split()[-1].strip("'")).resolve() == GREEDY.resolve()
    finally:
        db.close()


@pytest.mark.parametrize("module", ["arena.cli.match_cmd", "arena.cli.play_cmd"])
def test_a_help_that_lists_the_sample_names_lists_them_all(module: str) -> None:
    """'arena play --help' listed 'greedy, invader, random, search', without greedy-naive, which
    it plays like any other sample: every sample-name list in a help names exactly the samples."""
    import importlib
    import typing

    mod = importlib.import_module(module)
    command = mod.match if module.endswith("match_cmd") else mod.play
    lists = []
    for hint in typing.get_type_hints(command, include_extras=True).values():
        for info in getattr(hint, "__metadata__", ()):
            found = re.search(r"sample name \(([^)]*)\)", str(getattr(info, "help", "") or ""))
            if found:
                lists.append(found.group(1).split(", "))
    assert lists, f"{module}: no help lists the sample names"
    for names in lists:
        assert names == sorted(sample_bots()), names
