"""The rollout-learned worth corrections (arena.strength.calibration): the kinds of action
(R19-R22), the fit, the stored table, the search using it, and a real collection run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from arena.engine import ActionKind, legal_actions
from arena.strength.calibration import (
    KINDS,
    Calibration,
    CalibrationError,
    collect,
    fit,
    kind_of,
    main,
    read_records,
    shipped,
)
from arena.strength.search import Params, SearchPolicy
from arena.strength.worth import Potential

from .helpers import after_setup, edit, lid

# seat 0 owns green-4a, green-3a; seat 1 owns green-4b, green-3b (after_setup: lounger k to k % 4)
BOARD = {
    "green-3a": {"figure": 1},  # my towel, another's figure: RECLAIM (R20)
    "green-3b": {"figure": 0},  # another's towel, my figure: CONQUER (R22)
}


def test_kind_of_names_the_one_action_on_each_lounger() -> None:
    s = edit(after_setup(4), BOARD)
    assert kind_of(s, lid("green-4a")) == "flip"  # R19: own plain towel, no figure
    assert kind_of(s, lid("green-3a")) == "reclaim"  # R20
    assert kind_of(s, lid("green-4b")) == "invade"  # R21: another's towel, no figure
    assert kind_of(s, lid("green-3b")) == "conquer"  # R22


def record(
    q: dict[str, float], worth: dict[str, float], kinds: dict[str, tuple[str, int]]
) -> dict[str, object]:
    return {
        "players": 4,
        "actions": {a: {"kind": kinds[a][0], "value": kinds[a][1], "worth": worth[a], "q": q[a]} for a in q},
    }


def test_fit_is_the_mean_of_q_over_pass_minus_worth() -> None:
    kinds = {"pass": ("pass", 0), "i2": ("invade", 2), "c3": ("conquer", 3), "t5": ("five", 0)}
    recs = [
        record(
            {"pass": 1.0, "i2": 2.0, "c3": 4.0, "t5": 6.0},
            {"pass": 0, "i2": 2.0, "c3": 2.0, "t5": 5.0},
            kinds,
        ),
        record(
            {"pass": 0.0, "i2": 1.0, "c3": 3.0, "t5": 5.0},
            {"pass": 0, "i2": 2.0, "c3": 2.0, "t5": 5.0},
            kinds,
        ),
        {
            "players": 2,
            "actions": {"pass": {"kind": "pass", "value": 0, "worth": 0, "q": 0.0}},
        },  # other table
    ]
    table = fit(recs, 4)
    assert table.corrections["invade"][2] == pytest.approx(-1.0)  # (1-2 + 1-2) / 2
    assert table.corrections["conquer"][3] == pytest.approx(1.0)  # (3-2 + 3-2) / 2
    assert table.five == pytest.approx(0.0)
    assert table.corrections["flip"] == (0.0,) * 6  # never measured: no correction
    assert table.samples["invade"][2] == 2 and table.samples["flip"][2] == 0 and table.five_samples == 2
    again = Calibration.from_json(json.loads(json.dumps(table.to_json())))
    assert again == table


def test_apply_adds_the_correction_of_each_kind_and_value() -> None:
    s = edit(after_setup(4), BOARD)
    base = Potential().worths(s)
    corr = {k: (0.0, 0.0, 0.0, 0.0, 0.0, 0.0) for k in KINDS}
    corr["reclaim"] = (0.0, 0.0, 0.0, -0.5, 0.0, 0.0)
    corr["conquer"] = (0.0, 0.0, 0.0, 0.75, 0.0, 0.0)
    corr["flip"] = (0.0, 0.0, 0.0, 0.0, 1.0, 0.0)
    table = Calibration(4, corr, -0.25, {k: (0,) * 6 for k in KINDS})
    got = table.apply(s, base, scale=2.0)
    for name, delta in (("green-3a", -1.0), ("green-3b", 1.5), ("green-4a", 2.0), ("green-4b", 0.0)):
        i = lid(name)
        a, b = base.acts[i], got.acts[i]
        assert a is not None and b is not None
        assert b[0] == pytest.approx(a[0] + delta) and b[1] == a[1], name
    assert got.five is not None and base.five is not None and got.five == pytest.approx(base.five - 0.5)


@pytest.mark.parametrize("players", [2, 4])
def test_the_shipped_table_is_read_and_the_search_uses_it(players: int) -> None:
    table = shipped(players)
    assert table is not None and table.players == players
    assert sum(sum(v) for v in table.samples.values()) >= 100
    assert shipped(3) is None  # none for three players: the search runs uncalibrated there
    assert Params.for_players(players).calibration == 0.5  # the default, half weight
    s = edit(after_setup(players), BOARD)
    plain = SearchPolicy(replace(Params.for_players(players), calibration=0.0)).model(s).worths(s)
    used = SearchPolicy(Params.for_players(players)).model(s).worths(s)
    i = lid("green-4b")  # an INVADE of a 4 (R21)
    a, b = plain.acts[i], used.acts[i]
    assert a is not None and b is not None and table.corrections["invade"][4] < 0
    assert b[0] == pytest.approx(a[0] + 0.5 * table.corrections["invade"][4])


def test_bad_tables_and_records_are_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="cannot be read"):
        Calibration.from_json({"format": "something else"})
    with pytest.raises(CalibrationError, match="cannot be read"):
        Calibration.from_json({"format": "pool-arena-calibration-1", "players": 4, "corrections": {}})
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"players": 4, "actions": {}}\nnot json\n')
    with pytest.raises(CalibrationError, match=r"bad.jsonl:2: not a calibration record"):
        list(read_records([bad]))
    assert main(["fit", str(bad), "--out", str(tmp_path / "t.json")]) == 2


def test_a_real_collection_measures_every_legal_action(tmp_path: Path) -> None:
    """One real game with 2 rollouts per action: each record holds every legal action of a search
    decision with two or more lounger actions, PASS among them, with its worth and Q value."""
    recs = []
    for rec in collect(4, [6001], 2):
        recs.append(rec)
        if len(recs) == 2:
            break
    assert recs, "a four-player game always has such a decision"
    for rec in recs:
        acts = rec["actions"]
        assert "pass" in acts and rec["chosen"] in acts
        assert sum(a["kind"] != "pass" for a in acts.values()) >= 2
        assert all(a["kind"] in (*KINDS, "five", "pass") for a in acts.values())
        assert acts["pass"]["worth"] == 0.0
    out = tmp_path / "q.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["fit", str(out), "--players", "4", "--out", str(tmp_path / "t.json")]) == 0
    table = Calibration.from_json(json.loads((tmp_path / "t.json").read_text()))
    measured = sum(sum(v) for v in table.samples.values()) + table.five_samples
    assert measured == sum(len(r["actions"]) - 1 for r in recs)


def test_legal_actions_of_the_board_match_the_kinds() -> None:
    """The kinds the table is keyed by are exactly the engine's actions on those loungers."""
    s = edit(after_setup(4), BOARD, phase="action", result={"green": 4}, dice_to_throw=0)
    by_kind = {a.kind: a for a in legal_actions(s) if a.kind != ActionKind.PASS}
    names = {ActionKind.FLIP: "flip", ActionKind.RECLAIM: "reclaim", ActionKind.INVADE: "invade",
             ActionKind.CONQUER: "conquer"}  # fmt: skip
    for kind, action in by_kind.items():
        assert kind_of(s, action.lounger) == names[kind]
    assert set(by_kind) == set(names)


@pytest.mark.parametrize("players", [2, 4])
def test_the_shipped_table_is_the_fit_of_the_shipped_records(players: int) -> None:
    """The 2- and 4-player tables are reproducible: fitting the records each was learned from
    (shipped beside it) gives it exactly."""
    weights = Path(__file__).resolve().parents[2] / "arena" / "strength" / "weights"
    records = list(read_records([weights / f"calibration-{players}p-records.jsonl.gz"]))
    assert len(records) >= 150 and all(r["players"] == players for r in records)
    assert fit(records, players) == shipped(players)
