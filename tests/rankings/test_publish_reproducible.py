"""``arena leaderboard publish`` says "Reproduce:": a rerun must give the same table.

Bots draw their randomness from the Welcome's bot seed (a function of the match seed and the
seat), not from database ids, the search bot limits its CPU time rather than its wall-clock
time, and a tournament's games are rated in schedule order, so two fresh data folders and a
rerun in the same folder (other tournament and match ids) publish identical Markdown and JSON.
Real tournaments of real bot processes (2 jobs), a small definition."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.publish import publish
from arena.store.db import Database

BOARD = """title = "Reproducible"
bots = ["random", "greedy", "invader", "search"]
tables = [2]
games = 1
move_time = 2.0
bank = 20.0
seed = 77
min_games = 4
"""


def _publish(home: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "repro.toml").write_text(BOARD, encoding="utf-8")
    db = Database(f"sqlite:///{home / 'arena.db'}")
    try:
        rows, md, js = publish(db, "repro", jobs=2, folder=folder)
    finally:
        db.close()
    assert {r.bot for r in rows} == {"random", "greedy", "invader", "search"}
    assert all(r.games == 6 and r.forfeits == 0 for r in rows), rows
    return md.read_text(encoding="utf-8"), js.read_text(encoding="utf-8")


def test_publish_twice_gives_the_same_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _publish(tmp_path / "home-a", tmp_path / "out-1", monkeypatch)
    second = _publish(tmp_path / "home-b", tmp_path / "out-2", monkeypatch)
    assert first == second
    # a rerun in the same data folder: a second tournament, other match ids, the same table
    again = _publish(tmp_path / "home-a", tmp_path / "out-3", monkeypatch)
    assert again == first
    md = first[0]
    assert "| 1 |" in md and "random" in md and "Reproduce: `arena leaderboard publish repro`" in md


def test_a_definition_kept_elsewhere_is_reproduced_by_its_path(tmp_path: Path) -> None:
    """Published from a path (here with a space and a non-ASCII letter), the "Reproduce" line
    names that path, quoted for the shell: the bare name only works for leaderboards/ (an outside
    review copied 'arena leaderboard publish tiny' and got "no leaderboard 'tiny'")."""
    from store.helpers import cli_inproc

    folder = tmp_path / "my boards ü"
    folder.mkdir()
    (folder / "tiny.toml").write_text(BOARD.replace('"invader", "search"', '"invader"'), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    cli_inproc(home, f"sqlite:///{home / 'arena.db'}", "leaderboard", "publish", str(folder / "tiny.toml"))
    md = (folder / "tiny.md").read_text(encoding="utf-8")
    assert f'Reproduce: `arena leaderboard publish "{folder / "tiny.toml"}"`' in md, md


def test_shell_word_quotes_what_needs_it() -> None:
    from arena.safetext import shell_word

    assert shell_word("bots/greedy_bot.py") == "bots/greedy_bot.py"
    assert shell_word("/tmp/data dir/x.py") == '"/tmp/data dir/x.py"'
    assert shell_word("ü.py") == '"ü.py"'
    assert shell_word('a"b$c`d\\e') == '"a\\"b\\$c\\`d\\\\e"'
    assert shell_word("") == '""'
