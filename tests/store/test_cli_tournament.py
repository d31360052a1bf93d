"""``arena leaderboard``, ``arena tournament list/show/run`` (gauntlet), and publishing."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest
from sqlmodel import select

from arena.endings import wins_text
from arena.leaderboard import headers, leaderboard
from arena.publish import LEADERBOARDS, LeaderboardDefinitionError, load_definition, publish
from arena.ratings import get_system
from arena.store.bots import add_bot, list_bots
from arena.store.db import Database
from arena.store.models import RatingRow, Tournament, TournamentEntry
from arena.tournament.runner import run_tournament
from arena.tournament.service import create

from .helpers import cli_inproc, match_rows, run_cli, sample, table_rows


def test_leaderboard_and_tournament_cli(sqlite_url: str, arena_home: Path) -> None:
    """(SQLite only: the CLI is the same on both backends.  Two calls run the console script, the
    rest in-process, saving a second or more of start-up per call.)"""
    url = sqlite_url

    def cli(*args: str, code: int = 0, real: bool = False) -> tuple[str, str]:
        proc = (run_cli if real else cli_inproc)(arena_home, url, *args, code=code)
        return proc.stdout, proc.stderr

    db = Database(url)
    for name in ("greedy", "invader", "random"):
        add_bot(db, name, sample(name))
    db.close()
    _, err = cli("leaderboard", code=1, real=True)
    assert "error: no finished matches yet" in err
    assert "stand-alone 'arena match' games are not" in err  # why a played match is not there

    db = Database(url)
    t = create(
        db, ["greedy", "invader", "random"], games=1, seed=21, move_time=2.0, bank=20.0, name="cli check"
    )
    assert t.id is not None
    db.close()
    _, err = cli("leaderboard", "--tournament", str(t.id), code=1)
    assert f"tournament {t.id} has no finished matches yet; 'arena tournament start {t.id}'" in err
    db = Database(url)
    run_tournament(db, t.id, jobs=2)
    expected = {r.bot: r for r in leaderboard(db, tournament_id=t.id, system="elo", min_games=1)}
    rows = match_rows(db, t.id)
    db.close()
    assert len(rows) == 6

    for args in (
        ["--system", "openskill"],
        ["--system", "pl"],
        ["--tournament", str(t.id), "--system", "elo"],
    ):
        system = args[-1]
        out, _ = cli("leaderboard", *args, "--min-games", "1", real=system == "pl")  # 4 games each
        assert get_system(system).title in out
        assert (f"Tournament {t.id}" if "--tournament" in args else "All matches") in out
        header = next(line for line in out.splitlines() if line.startswith("┃"))
        assert [c.strip() for c in header.strip("┃").split("┃")] == headers(system)
        body = table_rows(out)
        assert [r[0] for r in body] == ["1", "2", "3"]
        assert {r[1] for r in body} == {"greedy", "invader", "random"}
        for r in body:
            rating = float(r[2])
            if r[3] not in ("too few games", "not measurable"):
                lo, hi = (float(x) for x in r[3].split(".."))
                assert lo <= rating <= hi
            assert float(r[4]) <= rating  # ranked by the lower bound (or mu - 3 sigma)
            e = expected[r[1]]
            assert r[5:] == [
                str(e.games),
                wins_text(e.wins),
                f"{e.mean_score:.1f}",
                str(e.timeouts),
                str(e.forfeits),
            ]
            assert r[5] == "4"
            if system == "elo":
                assert round(e.rating) == rating
    _, err = cli("leaderboard", "--system", "glicko", code=2)
    assert "choose from pl, elo, openskill" in err
    _, err = cli("leaderboard", "--tournament", "999", code=1)
    assert "error: no tournament 999" in err

    out, _ = cli("tournament", "list")
    row = next(r for r in table_rows(out) if r[0] == str(t.id))
    assert row[1:6] == ["cli check", "round-robin", "2", "finished", "6"]
    out, _ = cli("tournament", "show", str(t.id))
    assert f"tournament {t.id}: cli check" in out
    assert "format round-robin, tables of 2, 1 seed(s) per table, seed 21" in out
    assert "status finished; matches 6 finished" in out
    assert {c for r in table_rows(out) for c in r} >= {"greedy", "invader", "random"}  # provisional
    _, err = cli("tournament", "show", "999", code=1)
    assert "error: no tournament 999; see 'arena tournament list'" in err
    # 'publish' looks in the repository's leaderboards/ folder: an unknown name is a clear error
    _, err = cli("leaderboard", "publish", "no-such-board", code=2)
    assert "error: no leaderboard 'no-such-board'" in err and "sample" in err


def test_gauntlet_cli(sqlite_url: str, arena_home: Path) -> None:
    db_url = sqlite_url
    db = Database(db_url)
    for name in ("greedy", "invader", "random"):
        add_bot(db, name, sample(name))
    db.close()
    proc = run_cli(
        arena_home, db_url, "tournament", "run", "invader", "random", "--format", "gauntlet",
        "--candidate", "greedy", "--tables", "2,3", "--games", "1", "--seed", "3",
        "--move-time", "2", "--bank", "20", "--jobs", "2",
    )  # fmt: skip
    assert "gauntlet of 3 bots" in proc.stderr and "7 matches" in proc.stderr
    assert {c for r in table_rows(proc.stdout) for c in r} >= {"greedy", "invader", "random"}
    db = Database(db_url)
    with db.session() as session:
        [t] = session.exec(select(Tournament)).all()
        roles = {e.bot_version_id: e.role for e in session.exec(select(TournamentEntry)).all()}
    assert t.id is not None and t.format == "gauntlet" and t.status == "finished"
    rows = match_rows(db, t.id)
    db.close()
    [candidate] = [v for v, role in roles.items() if role == "candidate"]
    assert sorted(roles.values()) == ["candidate", "field", "field"]
    # tables of 2: the candidate with each of 2 field bots, 2 rotations; of 3: 1 table, 3 rotations
    assert len(rows) == 2 * 2 + 3
    for r in rows:
        assert r["status"] == "finished" and r["replays"] == 1
        assert r["versions"].count(candidate) == 1 and r["bots"].count("greedy") == 1, r
    assert Counter(r["bots"].index("greedy") for r in rows) == {0: 3, 1: 3, 2: 1}

    proc = run_cli(
        arena_home, db_url, "tournament", "run", "invader", "--format", "gauntlet", "--seed", "1", code=2
    )  # bad usage, told in one line
    said = proc.stderr.splitlines()
    assert said == ["error: a gauntlet needs --candidate BOT: the bot that plays the field"], said


def _toml(folder: Path, name: str, bots: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.toml").write_text(
        f'title = "Mini board"\nbots = {json.dumps(bots)}\ntables = [2]\ngames = 1\n'
        "move_time = 2.0\nbank = 20.0\nseed = 3\nmin_games = 1\n",
        encoding="utf-8",
    )


def test_publish(sqlite_db: Database, tmp_path: Path) -> None:
    db = sqlite_db
    folder = tmp_path / "boards"
    _toml(folder, "mini", ["greedy", "random"])
    before = sorted(p.name for p in LEADERBOARDS.iterdir())
    rows, md, js = publish(db, "mini", jobs=2, folder=folder)
    assert sorted(p.name for p in LEADERBOARDS.iterdir()) == before  # the repository is untouched
    assert (md, js) == (folder / "mini.md", folder / "mini.json")
    assert {r.bot for r in rows} == {"greedy", "random"}
    assert all(r.games == 2 and (r.lo is None or r.lo <= r.rating <= r.hi) for r in rows)

    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["leaderboard"] == "mini" and data["title"] == "Mini board" and data["system"] == "pl"
    assert data["tournament_seed"] == 3
    assert data["rows"] == [asdict(r) for r in rows]
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Mini board\n")
    assert "Reproduce: `arena leaderboard publish mini`" in text
    for note in data["notes"]:
        assert note in text
    lines = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| #")]
    assert len(lines) == 2
    for line, r in zip(lines, rows, strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[:2] == [str(r.rank), r.bot] and cells[5:7] == [str(r.games), wins_text(r.wins)]
        assert cells[2] == f"{r.rating:.0f}"

    with db.session() as session:
        [t] = session.exec(select(Tournament)).all()
        stored = session.exec(select(RatingRow).where(RatingRow.scope == "leaderboard:mini")).all()
    assert t.name == "leaderboard mini" and t.status == "finished"
    assert sorted((s.rating, s.games) for s in stored) == sorted((r.rating, r.games) for r in rows)

    rows2, _, _ = publish(db, "mini", jobs=2, folder=folder)  # again: bots unchanged, no new versions
    assert [i.versions for i in list_bots(db)] == [1, 1]
    assert [(r.bot, r.games) for r in rows2] == [(r.bot, r.games) for r in rows]


def test_publish_refuses_a_file_that_would_take_another_bots_name(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """A bot file of a definition is registered under its name: a changed copy of the greedy
    named greedy_bot.py silently became the sample ``greedy``'s newest version (which ``arena
    bots add`` refuses), and other_bot.py a new version of a user's ``other`` registered from
    another file.  Both are refused before anything is played or registered; the sample's own
    file listed by path is the sample."""
    db = sqlite_db
    folder = tmp_path / "boards"
    folder.mkdir()
    add_bot(db, "other", sample("invader"))
    (folder / "greedy_bot.py").write_text(sample("greedy").read_text() + "# mine\n", encoding="utf-8")
    (folder / "other_bot.py").write_text(sample("random").read_text(), encoding="utf-8")
    _toml(folder, "taken-sample", ["greedy_bot.py", "random"])
    with pytest.raises(LeaderboardDefinitionError, match=r"registered as 'greedy', the name of a sample bot"):
        publish(db, "taken-sample", folder=folder)
    _toml(folder, "taken-name", ["random", "other_bot.py"])
    with pytest.raises(
        LeaderboardDefinitionError, match=r"'other' is a registered bot of another file \(invader_bot.py\)"
    ):
        publish(db, "taken-name", folder=folder)
    with db.session() as session:
        assert session.exec(select(Tournament)).all() == []
    assert [(i.bot.name, i.versions) for i in list_bots(db)] == [("other", 1)]  # nothing registered

    (folder / "greedy_bot.py").write_text(sample("greedy").read_text(), encoding="utf-8")  # the sample itself
    _toml(folder, "by-path", ["greedy_bot.py", "random"])
    rows, _, _ = publish(db, "by-path", jobs=2, folder=folder)
    assert {r.bot for r in rows} == {"greedy", "random"}
    registered = sorted((i.bot.name, i.versions) for i in list_bots(db))
    assert registered == [("greedy", 1), ("other", 1), ("random", 1)]


def test_definitions_name_every_sample_bot(tmp_path: Path) -> None:
    """Sample names are those of ``arena bots``: ``greedy-naive`` is ``bots/greedy_naive_bot.py``
    (it was refused); the shipped board loads; a path is read beside the TOML file."""
    _toml(tmp_path, "naive", ["greedy-naive", "greedy"])
    board = load_definition("naive", tmp_path)
    assert board.bots == {"greedy-naive": sample("greedy_naive"), "greedy": sample("greedy")}
    (tmp_path / "mine_bot.py").write_text("# my own bot\n", encoding="utf-8")
    _toml(tmp_path, "mixed", ["mine_bot.py", "greedy-naive"])
    assert load_definition("mixed", tmp_path).bots["mine"] == tmp_path / "mine_bot.py"
    shipped = load_definition("sample")
    assert set(shipped.bots) >= {"search", "greedy", "greedy-naive", "random"}


def test_bad_leaderboard_definitions(db: Database, tmp_path: Path, arena_home: Path) -> None:
    folder = tmp_path / "boards"
    _toml(folder, "typo", ["greedy", "gredy"])
    refused = r"bot .gredy. is neither a sample bot \(greedy, greedy-naive, .*\) nor a file"
    with pytest.raises(LeaderboardDefinitionError, match=refused):
        publish(db, "typo", folder=folder)
    _toml(folder, "lonely", ["greedy"])
    with pytest.raises(LeaderboardDefinitionError, match="at least two bots"):
        load_definition("lonely", folder)
    (folder / "broken.toml").write_text("bots = [\n", encoding="utf-8")
    with pytest.raises(LeaderboardDefinitionError, match=r"broken\.toml"):
        load_definition("broken", folder)
    with pytest.raises(
        LeaderboardDefinitionError, match=r"no leaderboard 'nosuch'.*known: broken, lonely, typo"
    ):
        publish(db, "nosuch", folder=folder)
    # the command takes a definition's path too (its output goes beside it): the file is read
    toml = str(folder / "typo.toml")
    err = cli_inproc(arena_home, db.url, "leaderboard", "publish", toml, code=2).stderr
    assert "bot 'gredy' is neither a sample bot" in err and "typo.toml" in err, err
    err = cli_inproc(arena_home, db.url, "leaderboard", "publish", str(folder / "gone.toml"), code=2).stderr
    assert f"no leaderboard definition {folder / 'gone.toml'}: no such file" in err, err
    assert list_bots(db, include_removed=True) == []
    with db.session() as session:
        assert session.exec(select(Tournament)).all() == []
    assert not (arena_home / "artifacts").exists()


BAD_KEYS = [
    ("min_games = -1", r"'min_games' must be a whole number, 0 or more; got -1"),
    (
        "tables = 2",
        r"'tables' must list players per table, each 2, 3 or 4 \(e\.g\. \[2\] or \[2, 4\]\), got 2",
    ),
    ("tables = [5]", r"'tables' must list .* got \[5\]"),
    ('games = "many"', r"'games' must be a whole number, 1 or more; got 'many'"),
    ("games = 0", r"'games' must be a whole number, 1 or more; got 0"),
    ("move_time = -1", r"'move_time' must be a number, 0\.001 or more; got -1"),
    ("bank = true", r"'bank' must be a number, 0 or more; got True"),
    ("seed = -4", r"'seed' must be a whole number, 0 or more and below 9223372036854775808; got -4"),
    (  # the bound exactly (it read 'below 9.22337e+18'): 2^63 itself is refused, named in full
        "seed = 9223372036854775808",
        r"'seed' must be a whole number, 0 or more and below 9223372036854775808; got 9223372036854775808",
    ),
    ("seed = 2.5", r"'seed' must be a whole number, .* got 2\.5"),
    ("game = 3", r"unknown key 'game'; a definition has title, bots, tables, games, move_time, bank, seed"),
    ("tables = [4]", r"'tables' has tables of 4 but 'bots' lists 2; list more bots or smaller tables"),
    ("tables = [2, 2]", r"'tables' lists a size twice \(\[2, 2\]\); list each once"),
    ("title = [1, 2]", r"'title' must be text, got \[1, 2\]"),
]


@pytest.mark.parametrize(("line", "message"), BAD_KEYS, ids=[b[0] for b in BAD_KEYS])
def test_a_definitions_bad_key_is_named_before_anything_is_played(
    tmp_path: Path, line: str, message: str
) -> None:
    """Each key is checked when the definition is read, naming the file, the key and the value: a
    negative min_games was found only after every match was played (and each rerun added a
    tournament), 'tables = 2' said "'int' object is not iterable", a negative seed was published."""
    key = line.split(" = ")[0]
    lines = [
        ln for ln in ['bots = ["greedy", "random"]', "tables = [2]", "games = 1", "seed = 3"]
        if not ln.startswith(f"{key} ")
    ]  # fmt: skip
    folder = tmp_path / "boards"
    folder.mkdir()
    (folder / "bad.toml").write_text("\n".join([*lines, line]) + "\n", encoding="utf-8")
    with pytest.raises(LeaderboardDefinitionError, match=rf"bad\.toml: {message}"):
        load_definition("bad", folder)


def test_a_definition_listing_a_bot_twice_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "boards"
    _toml(folder, "twice", ["greedy", "random", "greedy"])
    with pytest.raises(LeaderboardDefinitionError, match=r"twice\.toml: 'bots' lists 'greedy' twice"):
        load_definition("twice", folder)
