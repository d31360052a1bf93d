"""Rules as a value (issue 14 item 5): rules versions travel in the state and the record header,
every released version stays replayable, and the ``sprint`` variant is honoured end to end in the
engine (R25, R26 read their thresholds from ``state.rules``).

The records under ``golden/records/v1_*`` were written by the code *before* rules became a value
(``arena engine play`` and real ``arena match`` runs); they must keep verifying unchanged.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine import (
    RELEASED,
    ReplayError,
    Rules,
    State,
    UnknownRulesError,
    apply,
    apply_throw,
    by_name,
    by_version,
    from_snapshot,
    make_policy,
    new_game,
    play_game,
    replay,
    to_snapshot,
)
from arena.engine.board import END_UNOCCUPIED, ROUND_CAP
from arena.engine.chance import DiceStream
from arena.engine.variants import SPRINT, STANDARD
from arena.v1 import arena_pb2 as pb
from arena.wire import state_from_pb, state_to_pb

RECORDS = Path(__file__).parent / "golden" / "records"
V1_RECORDS = sorted(RECORDS.glob("v1_*.jsonl"))
ARENA = Path(sys.executable).parent / "arena"


def test_registry_keeps_the_standard_rules_under_version_1() -> None:
    assert RELEASED["1"] is STANDARD
    assert (STANDARD.end_unoccupied, STANDARD.round_cap) == (END_UNOCCUPIED, ROUND_CAP)
    assert by_name("standard") is STANDARD and by_name("1") is STANDARD
    assert by_name("sprint") is SPRINT and by_version("sprint-1") is SPRINT
    assert len({r.version for r in RELEASED.values()}) == len(RELEASED)
    with pytest.raises(UnknownRulesError, match="choose a variant"):
        by_name("blitz")
    with pytest.raises(UnknownRulesError, match="not known to this engine"):
        by_version("2")


def test_rules_values_are_validated() -> None:
    with pytest.raises(ValueError, match="end_unoccupied"):
        Rules("x", "x", end_unoccupied=26, round_cap=10, summary="")
    with pytest.raises(TypeError, match="Rules"):
        new_game(2, "sprint")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", V1_RECORDS, ids=lambda p: p.name)
def test_records_written_before_rules_became_a_value_still_verify(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert json.loads(text.split("\n", 1)[0])["rules"] == "1"
    rep = replay(text)
    assert rep.rules is STANDARD and all(s.rules is STANDARD for s in rep.states)


def test_old_records_cover_matches_forfeits_and_the_round_cap() -> None:
    names = {p.name for p in V1_RECORDS}
    assert {"v1_match_2p.jsonl", "v1_match_3p.jsonl", "v1_match_forfeit.jsonl"} <= names
    terminations = {replay(p.read_text(encoding="utf-8")).result["termination"] for p in V1_RECORDS}
    assert terminations == {"normal", "round-cap", "forfeit"}


def _greedy(seed: int, players: int, rules: Rules) -> list[State]:
    """Every state of a greedy game under ``rules`` (the same dice and policies for any rules)."""
    pols = [make_policy("greedy", seed, s) for s in range(players)]
    dice = DiceStream(seed)
    state = new_game(players, rules)
    states = [state]
    while not state.is_over:
        if state.is_chance:
            state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
        else:
            state = apply(state, pols[state.seat].choose(state))
        states.append(state)
    return states


def test_r25_sprint_starts_the_final_round_at_ten_unoccupied_loungers() -> None:
    sprint = _greedy(5, 3, SPRINT)
    standard = _greedy(5, 3, STANDARD)
    k = next(i for i, s in enumerate(sprint) if s.final_round)
    trigger = sprint[k]
    assert END_UNOCCUPIED < trigger.unoccupied <= SPRINT.end_unoccupied
    assert sprint[k - 1].unoccupied > SPRINT.end_unoccupied
    # the same dice and choices up to there: only the threshold differs
    expected = to_snapshot(standard[k]) | {"rules": "sprint-1", "final_round": True}
    assert expected == to_snapshot(trigger)
    assert not standard[k].final_round
    assert sprint[-1].termination == "normal" and sprint[-1].rules is SPRINT
    assert len(sprint) < len(standard)


def test_r26_sprint_caps_the_game_at_forty_rounds() -> None:
    game = play_game(18, [make_policy("random", 18, s) for s in range(4)], rules=SPRINT)
    assert game.outcome.termination == "round-cap" and game.final.round == SPRINT.round_cap
    same = play_game(18, [make_policy("random", 18, s) for s in range(4)], record=False)
    assert same.final.round > SPRINT.round_cap  # the standard rules play on


def test_records_name_their_rules_and_replay_under_them() -> None:
    game = play_game(7, [make_policy("greedy", 7, s) for s in range(2)], rules=SPRINT)
    head, rest = game.record.split("\n", 1)
    assert json.loads(head)["rules"] == "sprint-1"
    rep = replay(game.record)
    assert rep.rules is SPRINT and rep.final == game.final
    # the same events under the standard rules do not replay: the header is what decides
    as_standard = json.dumps(json.loads(head) | {"rules": "1"}) + "\n" + rest
    with pytest.raises(ReplayError):
        replay(as_standard)
    unknown = json.dumps(json.loads(head) | {"rules": "9"}) + "\n" + rest
    with pytest.raises(ReplayError, match=r"line 1.*'9' is not known.*'1', 'sprint-1'"):
        replay(unknown)


def test_sprint_golden_record_verifies() -> None:
    rep = replay((RECORDS / "sprint1_engine_2p.jsonl").read_text(encoding="utf-8"))
    assert rep.rules is SPRINT and rep.result["termination"] == "normal"
    assert rep.final.unoccupied <= SPRINT.end_unoccupied


def test_states_under_different_rules_differ() -> None:
    assert new_game(2) != new_game(2, SPRINT)
    assert new_game(2, SPRINT) == new_game(2, SPRINT)


def test_snapshot_and_wire_carry_the_rules() -> None:
    s = _greedy(3, 2, SPRINT)[40]
    snap = to_snapshot(s)
    assert snap["rules"] == "sprint-1" and from_snapshot(snap) == s
    old = dict(snap)
    del old["rules"]
    assert from_snapshot(old).rules is STANDARD  # snapshots from before rules versions
    msg = pb.GameState.FromString(state_to_pb(s).SerializeToString())
    assert state_from_pb(msg, SPRINT) == s


def test_cli_plays_and_verifies_a_variant(tmp_path: Path) -> None:
    out = tmp_path / "sprint.jsonl"
    subprocess.run(
        [str(ARENA), "engine", "play", "-n", "2", "--seed", "3", "--rules", "sprint", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    assert json.loads(out.read_text(encoding="utf-8").split("\n", 1)[0])["rules"] == "sprint-1"
    done = subprocess.run([str(ARENA), "engine", "verify", str(out)], capture_output=True, text=True)
    assert done.returncode == 0 and "under rules sprint-1 (sprint)" in done.stdout
    bad = subprocess.run([str(ARENA), "engine", "play", "--rules", "blitz"], capture_output=True, text=True)
    assert bad.returncode == 2 and "blitz" in bad.stderr and "sprint" in bad.stderr


def test_render_names_a_variant() -> None:
    from arena.engine import render

    assert "rules sprint" in render(new_game(2, SPRINT), color=False)
    assert "rules" not in render(new_game(2), color=False)
