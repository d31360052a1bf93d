"""'arena replays analyse': every decision of a stored match valued; losses >= 0, 0 when the chosen
action is the best, a hand-checked decision (the last turn, where values are exact), the turn
expectimax consistent with the action values, clear errors, and the web route's JSON."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.engine import (
    Action,
    ActionKind,
    DiceStream,
    GreedyPolicy,
    Phase,
    RecordWriter,
    State,
    apply,
    apply_throw,
    by_name,
    legal_actions,
    new_game,
    replay,
)
from arena.engine.actions import STOP
from arena.store.db import Database
from arena.strength.analysis import analyse
from arena.strength.value import load_default
from arena.strength.value_search import ValueDecisions
from strength.analysis_store import store_match

pytestmark = pytest.mark.timeout(300)

HAND_SEED = 3  # with greedy play, seat 1's last action phase offers 'flip yellow-4a' (exact: +4)


def _game_passing_at_the_end(seed: int) -> str:
    """A two-player greedy game in which seat 1, in its (and the game's) last action phase, passes."""
    dice = DiceStream(seed)
    s = new_game(2)
    g = GreedyPolicy()
    w = RecordWriter(2, seed, seating=["first", "last-passer"])
    while not s.is_over:
        if s.is_chance:
            faces = dice.throw(s.turn, s.throw_no + 1, s.dice)
            w.throw(faces)
            s = apply_throw(s, faces)
            continue
        a = g.choose(s)
        if s.phase == Phase.ACTION and s.final_round and s.seat == 1:
            a = Action(ActionKind.PASS)
        w.decision(s, a)
        s = apply(s, a)
    w.finish(s)
    return w.text()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int, int]]:
    """A data folder with two stored matches: the hand-checked one, and a 3-player sprint game."""
    path = tmp_path_factory.mktemp("analysis-home")
    db = Database(f"sqlite:///{path / 'arena.db'}")
    hand = store_match(db, _game_passing_at_the_end(HAND_SEED), ["first", "last-passer"])
    from arena.engine import play_game

    sprint = play_game(8, [GreedyPolicy() for _ in range(3)], rules=by_name("sprint")).record
    three = store_match(db, sprint, ["a", "b", "c"])
    db.close()
    yield path, hand, three


def _run(home: Path, *args: str) -> Any:
    return CliRunner().invoke(
        app, ["replays", *args], env={"ARENA_HOME": str(home), "ARENA_DATABASE_URL": ""}
    )


def test_analyse_json_losses_are_non_negative_and_zero_when_the_best_was_chosen(
    home: tuple[Path, int, int],
) -> None:
    path, _hand, three = home
    res = _run(path, "analyse", str(three), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["match"] == three and data["players"] == 3
    decisions = data["decisions"]
    assert decisions
    assert {d["phase"] for d in decisions} == {"setup", "roll", "action"}
    for d in decisions:
        assert d["loss"] >= 0
        assert d["best_value"] >= d["chosen_value"]
        if d["chosen"] == d["best"]:
            assert d["loss"] == 0
        else:
            assert d["loss"] == pytest.approx(d["best_value"] - d["chosen_value"], abs=1e-3)
    for s in data["seats"]:
        mine = [d for d in decisions if d["seat"] == s["seat"]]
        assert s["decisions"] == len(mine)
        assert s["total_loss"] == pytest.approx(sum(d["loss"] for d in mine), abs=1e-3)
        assert s["curve"][-1][1] == pytest.approx(s["total_loss"], abs=1e-3)
        costly = sorted((d for d in mine if d["costly"]), key=lambda d: -d["loss"])
        assert [d["step"] for d in costly] == s["costliest"]
    # the steps are the record's events (the viewer's steps): the decision at step k is event k
    rep_events = [e for e in _events(path, three)]
    for d in decisions:
        assert rep_events[d["step"] - 1]["action"] == d["chosen"]


def _events(home: Path, match_id: int) -> list[dict[str, Any]]:
    res = _run(home, "export", str(match_id))
    return [json.loads(line) for line in res.stdout.splitlines()[1:-1]]


def test_hand_checked_decision_passing_in_the_last_turn_loses_exactly_four_points(
    home: tuple[Path, int, int],
) -> None:
    """Seat 1's last action ends the game, so the values there are exact margins: passing instead
    of flipping the yellow 4 costs 4 points of margin (R19, R27)."""
    path, hand, _three = home
    data = json.loads(_run(path, "analyse", str(hand), "--json").stdout)
    last = [d for d in data["decisions"] if d["seat"] == 1 and d["phase"] == "action"][-1]
    assert last["chosen"] == "pass"
    assert last["best"] == "flip yellow-4a"
    assert last["loss"] == pytest.approx(4.0, abs=1e-9)
    assert last["costly"]
    assert data["seats"][1]["name"] == "last-passer"


def test_rolling_values_agree_with_the_action_values_they_lead_to() -> None:
    """STOP's expectimax value is the best action value of the action phase it leads to."""
    vd = ValueDecisions(load_default())
    dice = DiceStream(17)
    s: State = new_game(3)
    g = GreedyPolicy()
    checked = 0
    while not s.is_over and checked < 25:
        if s.is_chance:
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
            continue
        if s.phase == Phase.ROLL:
            values = vd(s)
            assert set(values) == set(legal_actions(s))
            after = vd(apply(s, STOP))
            assert values[STOP] == pytest.approx(max(after.values()), abs=1e-9)
            checked += 1
        s = apply(s, g.choose(s))
    assert checked == 25


def test_the_search_evaluator_is_available(home: tuple[Path, int, int]) -> None:
    path, hand, _three = home
    res = _run(path, "analyse", str(hand), "--evaluator", "search", "--min-loss", "0.5")
    assert res.exit_code == 0, res.output
    assert "search bot's decision values" in res.stdout
    assert "setup decisions are not valued in points" in res.stdout


def test_table_output_names_the_seats_and_the_losses(home: tuple[Path, int, int]) -> None:
    path, hand, _three = home
    res = _run(path, "analyse", str(hand))
    assert res.exit_code == 0, res.output
    assert "Expected points lost, by seat" in res.stdout
    assert "flip yellow-4a" in res.stdout and "last-passer" in res.stdout


def test_cli_errors_are_clear(home: tuple[Path, int, int]) -> None:
    path, _hand, _three = home
    res = _run(path, "analyse", "9999")
    assert res.exit_code == 1
    assert "no match 9999" in res.stderr
    res = _run(path, "analyse", "1", "--evaluator", "oracle")
    assert res.exit_code == 2
    assert "unknown evaluator 'oracle'" in res.stderr


def test_analysis_is_a_pure_function_of_the_record(home: tuple[Path, int, int]) -> None:
    rep = replay(_game_passing_at_the_end(HAND_SEED))
    one = analyse(rep).to_json()
    two = analyse(rep).to_json()
    assert one == two


def test_web_route_analyses_in_the_background_and_answers_json(home: tuple[Path, int, int]) -> None:
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    path, hand, _three = home
    db = Database(f"sqlite:///{path / 'arena.db'}")
    server = BackgroundServer(create_app(db))
    url = server.start()
    try:

        def call(method: str, match_id: int) -> tuple[int, dict[str, Any]]:
            req = urllib.request.Request(f"{url}/matches/{match_id}/analysis", method=method)
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    return r.status, json.loads(r.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        assert call("GET", hand) == (200, {"status": "none"})
        code, body = call("POST", hand)
        assert code in (200, 202) and body["status"] in ("running", "done")
        deadline = time.monotonic() + 200
        while body["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
            code, body = call("GET", hand)
        assert code == 200 and body["status"] == "done"
        assert body["analysis"]["seats"][1]["name"] == "last-passer"
        code, missing = call("GET", 9999)
        assert code == 404 and "no match 9999" in missing["detail"]
        code, missing = call("POST", 9999)
        assert code == 404
    finally:
        server.stop()
        db.close()
