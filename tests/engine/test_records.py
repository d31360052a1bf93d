"""Game records (rules.md §6) and the ``arena engine`` CLI: determinism, exact replay, and
rejection with the right line number and reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import NO_GUARD_6, faces, setup

from arena.engine import (
    RecordWriter,
    ReplayError,
    apply,
    apply_throw,
    legal_actions,
    make_policy,
    new_game,
    outcome,
    parse_action,
    play_game,
    render,
    replay,
)
from arena.engine.scoring import scores

ARENA = Path(sys.executable).parent / "arena"


def game_record(players: int, seed: int, policy: str) -> str:
    return play_game(seed, [make_policy(policy, seed, s) for s in range(players)]).record


@pytest.fixture(scope="module")
def record2() -> str:
    return game_record(2, 7, "greedy")


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def edit_line(text: str, n: int, **changes: object) -> str:
    """The record with line ``n`` (1-based) changed as a JSON object."""
    lines = lines_of(text)
    obj = json.loads(lines[n - 1])
    obj.update(changes)
    lines[n - 1] = json.dumps(obj)
    return join(lines)


def first_line(text: str, pred) -> int:
    return next(k for k, ln in enumerate(lines_of(text), start=1) if pred(json.loads(ln)))


def rejected(text: str) -> ReplayError:
    with pytest.raises(ReplayError) as info:
        replay(text)
    return info.value


# --------------------------------------------------------------------------- determinism, format


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_section5_section6_same_seed_and_policy_give_the_same_record(players: int, policy: str) -> None:
    a = game_record(players, 31, policy)
    b = game_record(players, 31, policy)
    assert a == b
    assert a != game_record(players, 32, policy)
    rep = replay(a)
    assert rep.header == {"game": "cool-am-pool", "rules": "1", "players": players, "seed": 31}


def test_section6_record_layout(record2: str) -> None:
    lines = lines_of(record2)
    assert record2.endswith("\n")
    assert json.loads(lines[0]) == {"game": "cool-am-pool", "rules": "1", "players": 2, "seed": 7}
    events = [json.loads(ln) for ln in lines[1:-1]]
    # 24 setup placements (R8), seat order, each with its legal list
    for k, ev in enumerate(events[:24]):
        assert ev["seat"] == k % 2 and ev["action"].startswith("place ")
        assert len(ev["legal"]) == 24 - k
        assert ev["action"] in ev["legal"]
    assert "throw" in events[24] and len(events[24]["throw"].split(",")) == 6  # R9, R10
    for ev in events:
        assert set(ev) in ({"throw"}, {"seat", "legal", "action"}, {"seat", "legal", "action", "forced"})
        if "forced" in ev:
            assert ev["forced"] is True and len(ev["legal"]) == 1
        elif "legal" in ev:
            assert len(ev["legal"]) > 1
    last = json.loads(lines[-1])
    assert set(last) == {"scores", "placings", "termination"}
    res = outcome(replay(record2).final)
    assert last == {
        "scores": list(res.scores),
        "placings": list(res.placings),
        "termination": res.termination,
    }


@pytest.mark.parametrize("players", [2, 3, 4])
def test_section6_replay_round_trip(players: int) -> None:
    seed = 500 + players
    game = play_game(seed, [make_policy("random", seed, s) for s in range(players)])
    rep = replay(game.record)
    assert rep.final == game.final
    assert len(rep.states) == len(rep.events) + 1 == len(lines_of(game.record)) - 1
    assert rep.result["scores"] == list(game.outcome.scores)
    assert replay(lines_of(game.record)).final == game.final  # lines work as well as text
    assert replay(game.record + "\n\n").final == game.final  # trailing blank lines are fine


def test_section6_writer_records_any_throws_and_check_dice_off() -> None:
    """A record of hand-made throws replays with check_dice=False, but not against the stream."""
    writer = RecordWriter(2, 5)
    s = new_game(2)
    while not s.is_over:
        if s.is_chance:
            f = faces(NO_GUARD_6)
            writer.throw(f)
            s = apply_throw(s, f)
        else:
            action = {
                "setup": legal_actions(s)[0],
                "roll": parse_action("stop"),
                "action": parse_action("pass"),
            }[s.phase.label]
            writer.decision(s, action)
            s = apply(s, action)
    writer.finish(s)
    text = writer.text()
    assert s.termination == "round-cap"
    assert json.loads(lines_of(text)[-1]) == {
        "scores": [0, 0],
        "placings": [1, 1],
        "termination": "round-cap",
    }
    assert replay(text, check_dice=False).final == s
    err = rejected(text)
    assert err.line == 26 and "dice stream" in err.reason


# --------------------------------------------------------------------------- rejection


def test_section6_tampered_throw_is_rejected(record2: str) -> None:
    n = first_line(record2, lambda o: "throw" in o)
    assert n == 26  # header + 24 placements
    original = json.loads(lines_of(record2)[n - 1])["throw"]
    fake = "throw green,green,green,green,green,green"
    assert fake != original
    err = rejected(edit_line(record2, n, throw=fake))
    assert err.line == n
    assert "dice stream" in err.reason and "turn 1" in err.reason and "throw 1" in err.reason
    assert str(err).startswith(f"line {n}:")


def test_section6_wrong_number_of_dice_is_rejected(record2: str) -> None:
    n = first_line(record2, lambda o: "throw" in o)
    err = rejected(edit_line(record2, n, throw="throw green,red"))
    assert err.line == n


def test_section6_malformed_throw_text_is_rejected(record2: str) -> None:
    n = first_line(record2, lambda o: "throw" in o)
    err = rejected(edit_line(record2, n, throw="throw red,green,pink"))
    assert err.line == n and "pink" in err.reason


def test_section6_illegal_action_is_rejected(record2: str) -> None:
    err = rejected(edit_line(record2, 3, action=json.loads(lines_of(record2)[1])["action"]))
    assert err.line == 3
    assert "illegal action" in err.reason and "already carries a towel" in err.reason
    n = first_line(record2, lambda o: o.get("legal", [""])[0] == "stop")
    err = rejected(edit_line(record2, n, action="flip green-4a"))
    assert err.line == n and "illegal action 'flip green-4a'" in err.reason and "phase roll" in err.reason


def test_section6_malformed_action_is_rejected(record2: str) -> None:
    for bad in ("flip nowhere", "keep red=1,green=1", "stop now", ""):
        err = rejected(edit_line(record2, 27, action=bad))
        assert err.line == 27
        assert "malformed action" in err.reason


def test_section6_wrong_seat_is_rejected(record2: str) -> None:
    err = rejected(edit_line(record2, 3, seat=0))
    assert err.line == 3 and "seat 0" in err.reason and "seat 1's decision" in err.reason


def test_section6_wrong_legal_list_is_rejected(record2: str) -> None:
    legal = json.loads(lines_of(record2)[1])["legal"]
    err = rejected(edit_line(record2, 2, legal=legal[:-1]))
    assert err.line == 2 and "legal actions" in err.reason
    assert f"it lacks {legal[-1]!r}, which the engine allows" in err.reason  # the entry, not the lists
    err = rejected(edit_line(record2, 2, legal=list(reversed(legal))))
    assert err.line == 2 and "legal actions" in err.reason and "another order" in err.reason
    edited = [*legal[:3], "setup red-9", *legal[4:]]
    err = rejected(edit_line(record2, 2, legal=edited))
    assert "the record lists 'setup red-9', which the engine does not allow" in err.reason
    assert f"it lacks {legal[3]!r}" in err.reason and str(legal[5]) not in err.reason
    many = [*legal, *(f"place x-{i}" for i in range(10_000))]  # a huge list: a few named, counted
    err = rejected(edit_line(record2, 2, legal=many))
    assert "'place x-0'" in err.reason and "and 9990 more" in err.reason and len(err.reason) < 1000


def test_section6_wrong_scores_placings_termination_are_rejected(record2: str) -> None:
    last = len(lines_of(record2))
    result = json.loads(lines_of(record2)[-1])
    err = rejected(edit_line(record2, last, scores=[s + 1 for s in result["scores"]]))
    assert err.line == last and "scores" in err.reason
    err = rejected(edit_line(record2, last, placings=[9, 9]))
    assert err.line == last and "placings" in err.reason
    other = "round-cap" if result["termination"] == "normal" else "normal"
    err = rejected(edit_line(record2, last, termination=other))
    assert err.line == last and "termination" in err.reason


@pytest.mark.parametrize("seats", [[2], [-1], [True], [2**70], [0, 0]])
def test_section6_forfeit_of_a_seat_the_game_has_not_is_rejected(record2: str, seats: list[object]) -> None:
    """A result line naming a forfeited seat out of range was a traceback (IndexError) or, for
    -1, True or a repeated seat, replayed as 'OK' with placings no game can have."""
    lines = lines_of(record2)
    state = replay(join(lines)).states[39]
    pts = list(scores(state))
    forged = {"scores": pts, "termination": "forfeit", "forfeits": [{"seat": s} for s in seats]}
    for placings in ([1, 2], [2, 1], [1, 3], [3, 1], [2, 2], [1, 1]):
        err = rejected(join([*lines[:40], json.dumps({**forged, "placings": placings})]))
        assert err.line == 41
        assert err.reason.startswith("forfeit")


def test_section6_numbers_of_another_json_type_are_rejected(record2: str) -> None:
    """1.0 and true equal 1 in Python: a seat of 0.0, scores of 12.0 or placings of true
    replayed as OK, though the engine writes none of them (rules.md §6.4: integers)."""
    last = len(lines_of(record2))
    result = json.loads(lines_of(record2)[-1])
    err = rejected(edit_line(record2, 2, seat=0.0))
    assert err.line == 2 and "seat 0.0 acts" in err.reason
    err = rejected(edit_line(record2, last, scores=[float(s) for s in result["scores"]]))
    assert err.line == last and err.reason.startswith("scores")
    placings = [True if p == 1 else p for p in result["placings"]]
    err = rejected(edit_line(record2, last, placings=placings))
    assert err.line == last and err.reason.startswith("placings")


def test_section6_forced_only_on_a_decision_with_one_legal_action(record2: str) -> None:
    """'forced' (the viewers show it: the bot was not asked) was not checked: a real choice
    marked forced replayed as OK."""
    lines = lines_of(record2)
    chosen = first_line(record2, lambda o: len(o.get("legal", [])) > 1)
    err = rejected(edit_line(record2, chosen, forced=True))
    assert err.line == chosen and "'forced'" in err.reason
    one = first_line(record2, lambda o: o.get("forced") is True)
    assert len(json.loads(lines[one - 1])["legal"]) == 1
    err = rejected(edit_line(record2, one, forced=1))
    assert err.line == one and "'forced'" in err.reason
    replay(edit_line(record2, one, forced=True))  # as written


def test_section6_truncated_record_is_rejected(record2: str) -> None:
    lines = lines_of(record2)
    err = rejected(join(lines[:-1]))
    assert err.line == len(lines) - 1 and "without a result line" in err.reason
    err = rejected(join(lines[:40]))
    assert err.line == 40 and "without a result line" in err.reason
    # a result line before the game is over
    err = rejected(join([*lines[:40], lines[-1]]))
    assert err.line == 41 and "before the game is over" in err.reason


def test_section6_nothing_after_the_result_line(record2: str) -> None:
    lines = lines_of(record2)
    err = rejected(join([*lines, lines[-2]]))
    assert err.line == len(lines) + 1 and "nothing may follow" in err.reason


def test_section6_non_json_line_is_rejected(record2: str) -> None:
    lines = lines_of(record2)
    deep = '{"seat": 0, "legal": ' + "[" * 100_000 + "]" * 100_000 + "}"  # json's recursion gives up
    for bad in ('{"seat": 0, "legal": [', "not json", "[1, 2]", deep):
        err = rejected(join([*lines[:4], bad, *lines[5:]]))
        assert err.line == 5
        assert "JSON" in err.reason
    err = rejected(join([*lines[:4], '{"foo": 1}', *lines[5:]]))
    assert err.line == 5 and "expected a throw" in err.reason


@pytest.mark.parametrize("index", [0, 1, 4, -1])
def test_section6_a_key_given_twice_is_rejected(record2: str, index: int) -> None:
    """JSON leaves open which of two equal keys counts (Python's json took the last), so a line
    saying two things (say, two throws) replayed as one of them: it is refused, even when both
    values agree."""
    lines = lines_of(record2)
    line = lines[index]
    key, value = next(iter(json.loads(line).items()))
    lines[index] = "{" + json.dumps(key) + ": " + json.dumps(value) + ", " + line[1:]
    err = rejected(join(lines))
    assert err.line == (index % len(lines)) + 1
    assert f"the key {key!r} is given twice in one object" in err.reason


@pytest.mark.parametrize(("index", "key"), [(0, "seed"), (1, "seat"), (-1, "scores")])
def test_section6_number_too_long_to_read_is_rejected(record2: str, index: int, key: str) -> None:
    """An integer longer than Python's int-parsing limit (4,300 digits) made json raise a bare
    ValueError: every command that reads a record (engine verify/show, replays
    show/view/verify/analyse) ended in a traceback."""
    lines = lines_of(record2)
    number = "9" * 5000
    obj = json.loads(lines[index])
    obj[key] = 0  # a placeholder to put the number in as text
    lines[index] = json.dumps(obj).replace(f'"{key}": 0', f'"{key}": {number}')
    err = rejected(join(lines))
    assert err.line == index % len(lines) + 1
    assert err.reason == "not a record line: a number with thousands of digits"


def test_section6_truncated_line_names_the_column_once(record2: str) -> None:
    lines = lines_of(record2)
    err = rejected(join([*lines[:4], '{"seat": 0, "act']))  # a record cut off mid-line
    assert err.line == 5
    assert err.reason == "not JSON: Unterminated string starting at column 13"
    assert str(err) == "line 5: not JSON: Unterminated string starting at column 13"
    assert rejected("{} x").reason == "not JSON: Extra data at column 4"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"rules": "2"}, "rules version"),
        ({"rules": 1}, "rules version"),
        ({"players": 5}, "players"),
        ({"players": 1}, "players"),
        ({"players": "2"}, "players"),
        ({"game": "chess"}, "not a cool-am-pool record"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**63}, "seed"),
    ],
)
def test_section6_bad_header_is_rejected(record2: str, change: dict, why: str) -> None:
    err = rejected(edit_line(record2, 1, **change))
    assert err.line == 1 and why in err.reason


def test_section6_empty_record_is_rejected() -> None:
    err = rejected("")
    assert err.line == 0 and "empty" in err.reason


def test_section6_header_seed_must_match_the_dice(record2: str) -> None:
    err = rejected(edit_line(record2, 1, seed=8))
    assert err.line == 26 and "seed 8" in err.reason


def test_section6_decision_when_a_throw_is_due(record2: str) -> None:
    lines = lines_of(record2)
    err = rejected(join([*lines[:25], lines[26], *lines[25:]]))
    assert err.line == 26 and "throw of 6 dice is due" in err.reason


def test_r9_replay_state_after_setup() -> None:
    """The replayed state after the last placement equals the state built by hand."""
    text = game_record(2, 3, "greedy")
    rep = replay(text)
    s = new_game(2)
    for ev in rep.events[:24]:
        s = apply(s, ev["action"])
    assert rep.states[24] == s and s.seat == 0 and s.turn == 1
    assert setup(2).phase == s.phase


def test_section6_render_shows_board_lifeguard_and_end() -> None:
    """render draws the 3 rows of R3, the track of R6, supplies (R4, R5) and the end (R25, R26)."""
    game = play_game(12, [make_policy("greedy", 12, s) for s in range(3)])
    text = render(game.final)
    lines = text.splitlines()
    head = lines[0]
    positions = [head.index(c) for c in ("green", "purple", "yellow", "red", "blue")]
    assert positions == sorted(positions)
    assert [ln.split()[0] for ln in lines[1:4]] == ["4", "3", "2"]
    assert "five-1" in text and "five-2" in text
    assert "diving-board" in text and "row4-left" in text
    assert f"ended: {game.final.termination}" in text
    assert text.count("seat ") == 3
    assert "\x1b[" not in text and "\x1b[" in render(game.final, color=True)
    for seat, pts in enumerate(game.outcome.scores):
        assert f"seat {seat}  score {pts:>2}" in text


def test_section6_make_policy_names() -> None:
    """The built-in policies by name; anything else is an error."""
    with pytest.raises(ValueError):
        make_policy("perfect", 1, 0)
    s = setup(2)
    s = apply_throw(s, faces(NO_GUARD_6))
    for name in ("random", "greedy"):
        assert make_policy(name, 1, 0).choose(s) in legal_actions(s)


# --------------------------------------------------------------------------- CLI


def run_arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ARENA), *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(
    ("players", "seed", "policy"), [(2, 5, "greedy"), (3, 6, "random"), (4, 7, "greedy,random,greedy,random")]
)
def test_section6_cli_play_verify_show(tmp_path: Path, players: int, seed: int, policy: str) -> None:
    out = tmp_path / "game.jsonl"
    res = run_arena(
        "engine",
        "play",
        "--players",
        str(players),
        "--seed",
        str(seed),
        "--policy",
        policy,
        "--out",
        str(out),
    )
    assert res.returncode == 0, res.stderr
    text = out.read_text(encoding="utf-8")
    names = policy.split(",") if "," in policy else [policy] * players
    assert text == play_game(seed, [make_policy(n, seed, s) for s, n in enumerate(names)]).record
    res = run_arena("engine", "verify", str(out))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("OK")
    result = json.loads(lines_of(text)[-1])
    res = run_arena("engine", "show", str(out))
    assert res.returncode == 0, res.stderr
    assert (
        f"result: scores {result['scores']}, placings {result['placings']}, "
        f"termination {result['termination']}"
    ) in res.stdout


def test_section6_cli_verify_reports_the_broken_line(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    assert run_arena("engine", "play", "--players", "2", "--seed", "9", "--out", str(out)).returncode == 0
    text = out.read_text(encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(edit_line(text, 3, seat=0), encoding="utf-8")
    res = run_arena("engine", "verify", str(bad))
    assert res.returncode == 1
    assert "line 3" in res.stderr
    assert "OK" not in res.stdout
    bad.write_text(join(lines_of(text)[:-1]), encoding="utf-8")
    res = run_arena("engine", "verify", str(bad))
    assert res.returncode == 1 and f"line {len(lines_of(text)) - 1}" in res.stderr
