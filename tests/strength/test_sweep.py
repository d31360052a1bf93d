"""The paired sweep (``python -m arena.strength.sweep``): variants on the same duplicate groups,
each compared with the first group by group."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.strength.duel import factory, params_from_text
from arena.strength.sweep import paired, sweep

ROOT = Path(__file__).resolve().parents[2]


def test_paired_difference_and_its_interval() -> None:
    ref = [0.5, 0.6, 0.7, 0.4]
    var = [0.6, 0.6, 0.8, 0.5]  # +0.1, 0, +0.1, +0.1
    r = paired(ref, var, "v")
    assert r.diff == pytest.approx(0.075)
    # sd of (0.1, 0, 0.1, 0.1) = 0.05; half width 1.96 * 0.05 / 2
    assert r.half_width == pytest.approx(1.959963984540054 * 0.05 / 2)
    assert r.elo_change is not None and r.elo_change > 0
    assert r.elo_change_low is not None and r.elo_change_high is not None
    assert r.elo_change_low < r.elo_change < r.elo_change_high
    with pytest.raises(ValueError, match="same two or more groups"):
        paired([0.5], [0.6], "v")
    with pytest.raises(ValueError, match="same two or more groups"):
        paired([0.5, 0.5], [0.6], "v")


def test_same_variant_twice_differs_by_exactly_nothing_and_another_does_not() -> None:
    variants = ["greedy-naive", "greedy-naive", "greedy"]
    results = sweep(variants, "greedy-naive", 2, 40, 4, jobs=2, report=False)
    ref, same, other = results
    assert ref.diff is None and ref.groups == 4
    assert ref.share == pytest.approx(0.5)  # the naive greedy against itself: every seating once
    assert same.diff == 0.0 and same.half_width == 0.0 and same.elo_change == 0.0
    assert other.diff is not None and other.diff != 0.0
    # deterministic: one worker process gives the same figures
    again = sweep(["greedy-naive", "greedy"], "greedy-naive", 2, 40, 4, jobs=1, report=False)
    assert again[1].share == other.share and again[1].diff == other.diff


def test_unknown_or_malformed_search_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown search parameter.*bogus"):
        factory("search:bogus=1")
    with pytest.raises(ValueError, match="key=value"):
        factory("search:chip")
    with pytest.raises(ValueError, match="bad search parameters"):
        factory("search:chip=x")
    for bad, said in (
        ("final_round_result=yes", "0 or 1"),
        ("max_spend=0", "1 to 4"),
        ("max_spend=99", "1 to 4"),
    ):
        with pytest.raises(ValueError, match=said):
            params_from_text(bad)
    for bad in ("chip=nan", "lam=inf", "setup=0,0,1,nan,3,0"):  # nan made every worth nan, silently
        with pytest.raises(ValueError, match="not a finite number"):
            params_from_text(bad)
    # accepted before, then a traceback in the middle of the games (IndexError, ZeroDivisionError)
    for bad, why in (
        ("lam=1,2", "one share per value"),
        ("rho=0.5", "one share per value"),
        ("pace=0", "pace"),
    ):
        with pytest.raises(ValueError, match=f"bad search parameters.*{why}"):
            factory(f"search:{bad}")
    p = params_from_text("players=4;chip=0.5;max_spend=3;setup=0,0,1,2,3,0")
    assert p.potential.chip == 0.5 and p.max_spend == 3 and p.setup == (0.0, 0.0, 1.0, 2.0, 3.0, 0.0)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.strength.sweep", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_command_line_prints_and_writes_every_variant(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    proc = _cli("--players", "2", "--seed", "7", "--groups", "2", "--against", "greedy-naive",
                "greedy-naive", "search", "--json", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    head = "paired sweep: 2 variant(s) against greedy-naive, 2 players, groups 7..8 (4 games each)"
    assert head in proc.stdout
    assert "(reference)" in proc.stdout and "paired: share" in proc.stdout
    data = json.loads(out.read_text())
    assert [d["variant"] for d in data] == ["greedy-naive", "search"]
    assert data[0]["diff"] is None and data[1]["groups"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nobody",), "unknown policy 'nobody'"),
        (("search:bogus=1",), "unknown search parameter"),
        (("--groups", "1", "greedy"), "--groups must be at least 2"),
        (("--players", "5", "greedy"), "invalid choice"),
        (("--seed", "-1", "greedy"), "--seed must be 0 or more"),
        (("--seed", str(2**63 - 1), "--groups", "2", "greedy"), "at most 2**63"),
        (("--jobs", "0", "greedy"), "--jobs must be 1 or more"),
        (("--jobs", "-2", "greedy"), "--jobs must be 1 or more"),
        (("--groups", "-5", "greedy"), "--groups must be at least 2"),
    ],
)
def test_command_line_refuses_bad_input_with_a_clear_message(args: tuple[str, ...], message: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_duel_command_refuses_bad_names_with_a_clear_message() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena.strength.duel", "search:chip", "greedy"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "a search parameter is key=value" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("target", "reason"),
    [("afile/x.json", "{tmp}/afile is a file, not a folder"), ("adir", "it is a folder, not a file")],
)
def test_an_unwritable_json_path_is_refused_before_any_game(tmp_path: Path, target: str, reason: str) -> None:
    (tmp_path / "afile").write_text("keep me\n")
    (tmp_path / "adir").mkdir()
    path = tmp_path / target
    reason = reason.format(tmp=tmp_path)
    proc = _cli("--players", "2", "--groups", "2", "greedy-naive", "--json", str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: cannot write {path}: {reason}; give another path"]
    assert proc.stdout == ""  # no game played
    assert (tmp_path / "afile").read_text() == "keep me\n" and list((tmp_path / "adir").iterdir()) == []


def test_json_in_missing_folders_is_written(tmp_path: Path) -> None:
    out = tmp_path / "new" / "sub" / "sweep.json"
    proc = _cli("--players", "2", "--groups", "2", "greedy-naive", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [d["variant"] for d in json.loads(out.read_text())] == ["greedy-naive"]


def test_json_that_cannot_be_written_after_the_games_goes_to_stdout() -> None:
    proc = _cli("--players", "2", "--groups", "2", "greedy-naive", "--json", "/dev/full")  # a full disk
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: cannot write /dev/full: No space left on device; the JSON went to standard output instead"
    ]
    assert "(reference)" in proc.stdout  # the result lines are still there
    data = json.loads(proc.stdout[proc.stdout.index("\n[") :])  # and the JSON after them
    assert [d["variant"] for d in data] == ["greedy-naive"]


def test_help_explains_the_variants_and_shows_every_default() -> None:
    proc = _cli("--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "**" not in text and "``" not in text  # no raw Markdown / reST
    for syntax in ("greedy-naive", "search:key=value;...", "search@package.module:name", "example:"):
        assert syntax in text
    assert '"search:players=4" "search:players=4;chip=0.45"' in text
    for default in ("(default: greedy)", "(default: 4)", "(default: 1)", "(default: 100)", "(default: 2)"):
        assert default in text
    assert "(default: None)" not in text
