"""The head-to-head cross table, in the store, `arena tournament show` and the web page; and the
pull step storing a Swiss round (with its byes) once, however often it is asked."""

from __future__ import annotations

import itertools
import json
import re
import urllib.request
from pathlib import Path

import pytest
from store.helpers import cli_inproc, sample

from arena.cli.tournament_cmd import _repeat_note
from arena.endings import MatchEnd
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.bots import add_bot
from arena.store.crosstable import CrossTable, cross_table
from arena.store.db import Database
from arena.store.tournaments import queued_tasks, record_result, stored_history
from arena.tournament.formats import Play, Wait
from arena.tournament.formats.swiss import pair_tables, repeats
from arena.tournament.pull import pull, ranked_versions
from arena.tournament.pull import report as format_report
from arena.tournament.service import TournamentConfigError, create
from arena.web.app import create_app
from arena.web.server import BackgroundServer

NAMES = ("a", "b", "c", "d", "e")


def _field(db: Database, tmp: Path) -> None:
    tmp.mkdir(exist_ok=True)
    for name in NAMES:
        path = tmp / f"{name}.py"
        path.write_text(sample("greedy").read_text(encoding="utf-8") + f"# {name}\n", encoding="utf-8")
        add_bot(db, name, path)


def _finish_queued(db: Database, tid: int, rank: dict[str, int]) -> None:
    """Record every queued match with placings by ``rank`` (lower is better; equal: shared)."""
    for task in queued_tasks(db, tid):
        names = [s.name for s in task.seats]
        places = [1 + sum(1 for o in names if rank[o] < rank[n]) for n in names]
        seats = tuple(
            SeatOutcome(i, n, 10 - places[i], places[i], MatchEnd.NORMAL, "", 0.1, 0.1, 2)
            for i, n in enumerate(names)
        )
        result = MatchResult(task.key, task.seed, len(names), MatchEnd.NORMAL, seats, "r\n")
        assert record_result(db, task.match_id, result)


def test_swiss_rounds_byes_and_cross_table(sqlite_db: Database, tmp_path: Path, arena_home: Path) -> None:
    db = sqlite_db
    _field(db, tmp_path / "bots")
    t = create(db, list(NAMES), fmt="swiss", table_sizes=(2,), games=1, seed=4, rounds=2)
    assert t.id is not None
    tid = t.id
    matches, byes = stored_history(db, tid)
    assert len(matches) == 4 and len(byes) == 1 and byes[0].round == 1  # 5 bots: one bye a round
    assert isinstance(pull(db, tid), Wait)  # round 1 is not played yet: nothing new is stored
    rank = {"a": 0, "b": 1, "c": 1, "d": 3, "e": 4}  # b and c share places when they meet
    _finish_queued(db, tid, rank)
    second = pull(db, tid)
    assert isinstance(second, Play) and {p.round for p in second.pairings} == {2}
    assert isinstance(pull(db, tid), Wait)  # asked again: round 2 is not stored twice
    matches, byes = stored_history(db, tid)
    assert (
        len(matches) == 8 and [b.round for b in byes] == [1, 2] and byes[0].version_id != byes[1].version_id
    )
    _finish_queued(db, tid, rank)

    cross = cross_table(db, tid)
    by_share = cross.names
    ranked = ranked_versions(db, tid)  # the Swiss standing's order, which the cross table follows
    assert len(ranked) == 5
    standing = [line.split(" ")[1] for line in format_report(db, tid)[1:]]
    assert cross_table(db, tid, ranked).names == tuple(standing)
    assert cross_table(db, tid, ranked[:2]).names[:2] == tuple(standing[:2])  # the rest: by share
    assert [n for n in cross_table(db, tid, ranked[:2]).names[2:]] == [
        n for n in by_share if n not in standing[:2]
    ]
    idx = {n: i for i, n in enumerate(cross.names)}
    expected: dict[tuple[str, str], list[float]] = {}
    for m in stored_history(db, tid)[0]:
        assert m.placings is not None
        ids = list(m.version_ids)
        for i in range(2):
            me, other = NAMES[ids[i] - 1], NAMES[ids[1 - i] - 1]
            share = (
                1.0
                if m.placings[i] < m.placings[1 - i]
                else 0.5
                if m.placings[i] == m.placings[1 - i]
                else 0.0
            )
            expected.setdefault((me, other), []).append(share)
    for (me, other), shares in expected.items():
        cell = cross.cells[idx[me]][idx[other]]
        assert cell is not None and (cell.points, cell.meetings) == (sum(shares), len(shares))
    for n in NAMES:
        assert cross.cells[idx[n]][idx[n]] is None
    assert cross.names[0] == "a"  # the best head-to-head share first
    assert all(
        c is None
        or (c.points + cross.cells[j][i].points, c.meetings) == (c.meetings, cross.cells[j][i].meetings)  # type: ignore[union-attr]
        for i, row in enumerate(cross.cells)
        for j, c in enumerate(row)
    )

    shown = cli_inproc(arena_home, db.url, "tournament", "show", str(tid))
    assert "head to head" in shown.stdout
    # the key on one line of its own (as the table's title it wrapped in the middle of a phrase)
    assert "  head to head: row against column, 1 per better place, ½ per shared one; points/meetings\n" in (
        shown.stdout
    )
    assert cross.byes_text.startswith("round 1: ") and f"byes: {cross.byes_text}" in shown.stdout
    assert re.fullmatch(r"round 1: [a-e] \(0\.5 points\); round 2: [a-e] \(0\.5 points\)", cross.byes_text)
    # a won both its rounds (or had a bye in one); one line per bot under a heading
    assert "  Swiss standing after round 2 of 2: points, then Buchholz\n  1. a 2 (Buchholz " in shown.stdout
    first_row = next(line for line in shown.stdout.splitlines() if "1 a" in line)
    assert cross.totals[0].text in first_row

    with (
        BackgroundServer(create_app(db)) as url,
        urllib.request.urlopen(f"{url}/tournaments/{tid}", timeout=30) as r,
    ):
        page = r.read().decode("utf-8")
    assert f'<dd id="byes">{cross.byes_text}</dd>' in page
    assert (
        'id="cross-table"' in page
        and '<dd class="format-report">1. a 2 (Buchholz ' in page
        and f"<td>{cross.totals[0].text}</td>" in page
    )


def test_a_knockout_bye_shows_who_went_through(sqlite_db: Database, tmp_path: Path, arena_home: Path) -> None:
    """A knockout's bye is worth no points: ``tournament show`` names who went through, with no
    ``(0)`` after the name (a Swiss bye shows what it scored, above)."""
    db = sqlite_db
    _field(db, tmp_path / "bots")
    t = create(db, ["a", "b", "c"], fmt="knockout", games=1, seed=3)
    assert t.id is not None
    _finish_queued(db, t.id, {"a": 0, "b": 1, "c": 2})
    pull(db, t.id)  # the final: a (through on its bye) against the winner of b and c
    _finish_queued(db, t.id, {"a": 0, "b": 1, "c": 2})
    shown = cli_inproc(arena_home, db.url, "tournament", "show", str(t.id))
    lines = shown.stdout.splitlines()
    assert "  byes: round 1: a" in lines, shown.stdout
    assert "(0)" not in shown.stdout and "champion: a" in shown.stdout, shown.stdout


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fmt": "round-robin", "rounds": 3}, "--rounds is for Swiss"),
        ({"fmt": "knockout", "table_sizes": (4,)}, "two-player tables"),
        ({"fmt": "swiss", "table_sizes": (2, 4)}, "one table size"),
        ({"fmt": "swiss", "seeding": "rating"}, "--seeding is for knockout"),
        ({"fmt": "knockout", "seeding": "elo"}, "unknown seeding"),
        ({"fmt": "swiss", "candidate": "a"}, "--candidate is for gauntlets"),
    ],
)
def test_bad_combinations(
    sqlite_db: Database, tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    _field(sqlite_db, tmp_path / "bots")
    with pytest.raises(TournamentConfigError, match=message):
        create(sqlite_db, ["a", "b", "c", "d"], **kwargs)  # type: ignore[arg-type]


def test_cli_rejects_bad_combinations(sqlite_url: str, tmp_path: Path, arena_home: Path) -> None:
    db = Database(sqlite_url)
    _field(db, tmp_path / "bots")
    db.close()
    out = cli_inproc(arena_home, sqlite_url, "tournament", "create", "a", "b", "c", "--format", "swiss",
                     "--tables", "4", code=2)  # fmt: skip
    assert "needs at least 4 bots" in out.stderr
    out = cli_inproc(arena_home, sqlite_url, "tournament", "create", "a", "b", "--format", "league", code=2)
    assert "swiss" in out.stderr and "knockout" in out.stderr
    for command in ("create", "run"):  # a bot named that is no bot: a usage error, as in match/evaluate/play
        missing = cli_inproc(arena_home, sqlite_url, "tournament", command, "a", "nobody", code=2)
        assert "no bot 'nobody'" in missing.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            "a b --rounds 3",
            "--rounds is for Swiss tournaments, not round-robin; leave it out, or use --format swiss",
        ),
        (
            "a b --format swiss --seeding rating",
            "--seeding is for knockout tournaments, not swiss; leave it out, or use --format knockout",
        ),
        (
            "a b --candidate c",
            "--candidate is for gauntlets, not round-robin; leave it out, or use --format gauntlet",
        ),
        ("a b --format gauntlet", "a gauntlet needs --candidate BOT: the bot that plays the field"),
        (
            "a b --format gauntlet --candidate a",
            "the candidate a must not also be in the field; leave it out of the bots listed",
        ),
        ("a b a", "a is named twice; name each bot only once"),
        ("a a@1 b", "a and a@1 are the same bot version; name each version once"),
        ("a --format knockout", "a knockout needs at least 2 bots, got 1"),
        ("a b --format knockout --tables 3", "a knockout plays two-player tables (--tables 2), got [3]"),
        ("a b c --tables 4", "tables of 4 need at least 4 bots in the field, got 3"),
        (
            "a b c --format swiss --tables 2,3",
            "a Swiss tournament plays one table size of 2, 3 or 4, got [2, 3]",
        ),
        ("a b --format knockout --seeding elo", "unknown seeding 'elo'; choose order or rating"),
    ],
)
@pytest.mark.parametrize("command", ["create", "run"])
def test_cli_bad_combinations_are_usage_errors(
    sqlite_url: str, tmp_path: Path, arena_home: Path, command: str, args: str, message: str
) -> None:
    """Options that do not go together are bad usage (exit 2), told in one line that says what
    to change, before anything is stored or played."""
    db = Database(sqlite_url)
    _field(db, tmp_path / "bots")
    db.close()
    out = cli_inproc(arena_home, sqlite_url, "tournament", command, *args.split(), "--no-sandbox", code=2)
    assert out.stderr.splitlines() == [f"error: {message}"], out.stderr
    assert out.stdout == ""
    listed = cli_inproc(arena_home, sqlite_url, "tournament", "list")
    assert "no tournaments yet" in listed.stdout


def test_a_swiss_with_more_rounds_than_new_pairings_says_so(
    sqlite_url: str, tmp_path: Path, arena_home: Path
) -> None:
    """More Swiss rounds than there are all-new pairings is allowed, with a note (an outside review
    ran 100 rounds of 2 bots: the same pairing 100 times, nothing said)."""
    db = Database(sqlite_url)
    _field(db, tmp_path / "bots")
    db.close()
    out = cli_inproc(
        arena_home, sqlite_url, "tournament", "create", "a", "b", "c", "--format", "swiss", "--rounds", "5"
    )
    note = " ".join(out.stderr.split())
    assert (
        "note: 3 bots have at most 3 rounds in which no two of them share a table again: rounds 4 to 5 "
        "repeat opponents already met" in note
    )
    out = cli_inproc(
        arena_home,
        sqlite_url,
        "tournament",
        "create",
        "a",
        "b",
        "c",
        "d",
        "--format",
        "swiss",
        "--rounds",
        "3",
    )
    assert "note:" not in out.stderr, out.stderr
    # 4-player tables of 4 bots: every round is the same table (a newcomer saw no note); one round
    # over the limit is named alone ("rounds 4 to 4" before)
    args = ("tournament", "create", "a", "b", "c", "d", "--format", "swiss", "--games", "1")
    out = cli_inproc(arena_home, sqlite_url, *args, "--tables", "4", "--rounds", "3")
    assert "note: 4 bots have at most 1 round in which no two of them share a 4-player table again: " in (
        " ".join(out.stderr.split())
    )
    out = cli_inproc(arena_home, sqlite_url, *args, "--rounds", "4")
    assert "round 4 repeats opponents already met" in " ".join(out.stderr.split())


def test_knockout_seeded_by_rating(sqlite_db: Database, tmp_path: Path) -> None:
    """--seeding rating: the pl rating over every finished match (what 'arena leaderboard'
    shows) first, bots that never played last in the order given; the best seeds get the byes;
    the command says how it seeded.  (It used to read a stored scope that nothing wrote: an
    outside review found every bracket in the order given.)"""
    from arena.cli.tournament_cmd import _seeds_line

    db = sqlite_db
    _field(db, tmp_path / "bots")
    unrated = create(db, list(NAMES), fmt="knockout", games=1, seed=2, seeding="rating")
    assert json.loads(unrated.config)["format_options"]["order"] == [0, 1, 2, 3, 4]
    assert "no bot has a rating yet" in _seeds_line(unrated)
    played = create(db, ["a", "b", "c", "d"], fmt="round-robin", games=2, seed=1)  # e plays nothing
    assert played.id is not None
    _finish_queued(db, played.id, {"d": 0, "c": 1, "a": 2, "b": 3})
    t = create(db, list(NAMES), fmt="knockout", games=1, seed=2, seeding="rating")
    assert t.id is not None
    options = json.loads(t.config)["format_options"]
    assert options["order"] == [3, 2, 0, 1, 4]  # d, c, a, b by rating, then e (unrated)
    ratings = options["ratings"]
    assert ratings[4] is None and ratings[3] > ratings[2] > ratings[0] > ratings[1]
    line = _seeds_line(t)
    assert line.startswith("seeded by rating (pl, every finished match): 1. d ") and "5. e (unrated)" in line
    _, byes = stored_history(db, t.id)
    assert sorted(b.version_id for b in byes) == [1, 3, 4]  # 5 bots, a bracket of 8: 3 byes


def test_the_swiss_note_covers_the_default_rounds(sqlite_url: str, tmp_path: Path, arena_home: Path) -> None:
    """Without --rounds a Swiss plays ceil(log2(bots)) rounds: 2 for 4 bots, and at a 4-player
    table round 2 is round 1's table again. The note was printed only for a --rounds given, so
    the default's repeats went unsaid."""
    db = Database(sqlite_url)
    _field(db, tmp_path / "bots")
    db.close()
    args = ("tournament", "create", "a", "b", "c", "d", "--format", "swiss", "--games", "1", "--tables", "4")
    out = cli_inproc(arena_home, sqlite_url, *args)
    note = " ".join(out.stderr.split())
    assert "note: 4 bots have at most 1 round in which no two of them share a 4-player table again: " in note
    assert "round 2 repeats opponents already met" in note
    out = cli_inproc(arena_home, sqlite_url, "tournament", "create", "a", "b", "c", "d", "--format", "swiss")
    assert "note:" not in out.stderr, out.stderr  # two-player tables: 2 default rounds of 3 new ones


@pytest.mark.parametrize(
    ("bots", "size", "rounds", "fresh"),
    [(8, 4, 2, 1), (6, 3, 2, 1), (12, 4, 2, 1), (7, 3, 2, 1), (4, 4, 2, 1)],
)
def test_the_swiss_note_counts_the_rounds_tables_of_3_or_4_can_keep_new(
    bots: int, size: int, rounds: int, fresh: int
) -> None:
    """8 bots at two 4-player tables (or 6 at two 3-player tables) cannot play a second round in
    which no two meet again: each round-2 table would need 4 (3) bots from different round-1
    tables. The note said nothing ('at most 2 rounds'), and the Swiss pairing repeats."""
    note = _repeat_note(bots, size, rounds)
    assert note is not None and f"have at most {fresh} round " in note, note
    first = [tuple(range(i, i + size)) for i in range(0, bots - bots % size, size)]
    met = {frozenset(p) for t in first for p in itertools.combinations(t, 2)}
    order = list(range(bots))[-(bots - bots % size) :] if bots % size else list(range(bots))
    assert sum(repeats(t, met) for t in pair_tables(order, size, met)) > 0  # the pairing repeats


@pytest.mark.parametrize(("bots", "size", "fresh"), [(9, 3, 4), (16, 4, 5), (5, 3, 2)])
def test_the_swiss_note_keeps_quiet_while_new_rounds_can_exist(bots: int, size: int, fresh: int) -> None:
    """Fields where ``fresh`` new rounds exist (9 bots in triples: an affine plane, 4 rounds)."""
    assert _repeat_note(bots, size, fresh) is None
    assert f"at most {fresh} round" in (_repeat_note(bots, size, fresh + 1) or "")


def test_create_says_a_swiss_or_knockout_queues_round_1_of_more(
    sqlite_url: str, tmp_path: Path, arena_home: Path
) -> None:
    """A Swiss (or knockout) stores round 1 only: 'create' said '4 matches' of a 12-match Swiss,
    read as the whole tournament. A round robin's stored schedule is the whole of it."""
    db = Database(sqlite_url)
    _field(db, tmp_path / "bots")
    db.close()
    swiss = ("tournament", "create", *NAMES, "--format", "swiss", "--games", "1", "--seed", "1")
    out = cli_inproc(arena_home, sqlite_url, *swiss)
    assert ", 4 matches queued (round 1), 12 in all, seed 1," in out.stderr, out.stderr
    shown = cli_inproc(arena_home, sqlite_url, "tournament", "show", "1")
    assert "matches 4 queued (8 more in later rounds, 12 in all)" in shown.stdout, shown.stdout
    knockout = ("tournament", "create", *NAMES, "--format", "knockout", "--games", "1", "--seed", "1")
    out = cli_inproc(arena_home, sqlite_url, *knockout)
    assert ", 2 matches queued (round 1), 8 in all, seed 1," in out.stderr, out.stderr
    out = cli_inproc(arena_home, sqlite_url, "tournament", "create", *NAMES, "--games", "1", "--seed", "1")
    assert ", 20 matches, seed 1," in out.stderr, out.stderr


def test_several_byes_in_a_round_are_named_once_per_round() -> None:
    """Three-player tables of eight bots leave two byes a round: the line repeated 'round 1:'."""
    table = CrossTable(names=(), cells=(), totals=(), byes=((1, "a", 0.5), (1, "b", 0.5), (2, "c", 0.5)))
    assert table.byes_text == "round 1: a, b (0.5 points each); round 2: c (0.5 points)"
    knockout = CrossTable(names=(), cells=(), totals=(), byes=((1, "a", 0.0), (1, "b", 0.0)))
    assert knockout.byes_text == "round 1: a, b"
    mixed = CrossTable(names=(), cells=(), totals=(), byes=((1, "a", 1.0), (1, "b", 0.5)))
    assert mixed.byes_text == "round 1: a (1 point), b (0.5 points)"
