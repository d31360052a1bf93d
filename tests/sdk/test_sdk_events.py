"""The SDK hands bots the game, not strings (issue 13 §6): typed events with forced/automatic
flags and throw faces, the request's clock fields, the match's attributes and its bot seed.
Real matches of real bot processes over real gRPC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.engine.notation import parse_throw
from arena.referee import MatchResult, TimeControl
from arena.referee.botseed import bot_seed

from .conftest import BOTS, Seat, play, records, replay_lines


def _expected(line: dict[str, Any]) -> dict[str, Any]:
    """A replay line in the form the recording bot writes its events."""
    if "throw" in line:
        return {"throw": list(parse_throw(line["throw"])), "text": line["throw"]}
    return {
        "seat": line["seat"],
        "action": line["action"],
        "forced": bool(line.get("forced", False)),
        "automatic": bool(line.get("auto", False)),
        "text": f"seat {line['seat']}: {line['action']}",
    }


def _seen(event: dict[str, Any]) -> dict[str, Any]:
    if "throw" in event:
        return {"throw": event["throw"], "text": event["text"]}
    return {k: event[k] for k in ("seat", "action", "forced", "automatic", "text")}


def test_bots_get_typed_events_clock_fields_and_their_match(tmp_path: Path) -> None:
    files = [tmp_path / "seat0.jsonl", tmp_path / "seat1.jsonl"]
    seats = [
        Seat(BOTS / "recorder_bot.py", {"SDK_RECORD": str(files[0])}),
        Seat(BOTS / "recorder_bot.py", {"SDK_RECORD": str(files[1])}),
        Seat(BOTS / "quitter_bot.py"),
    ]
    result = play(seats, seed=11, control=TimeControl(1.5, 12.0))
    assert result.seats[2].termination == "illegal-action"
    assert result.seats[0].termination == result.seats[1].termination in ("normal", "round-cap")
    game = replay_lines(result)
    for seat, path in enumerate(files):
        lines = records(path)
        assert [ln["hook"] for ln in lines[:2]] == ["start", "setup"] and lines[-1]["hook"] == "end"
        setup = lines[1]
        assert setup["seat"] == seat and setup["players"] == 3 and setup["match_id"] == result.match_id
        assert setup["seating"] == ["recorder_bot", "recorder_bot", "quitter_bot"]
        assert setup["bot_seed"] == bot_seed(11, seat) and setup["setup_ms"] == 5000
        assert (setup["move_time"], setup["bank"], setup["unlimited"]) == (1.5, 12.0, False)
        chooses = [ln for ln in lines if ln["hook"] == "choose"]
        assert len(chooses) > 20
        ids = [c["request_id"] for c in chooses]
        assert ids == sorted(set(ids)) and all(c["raw_id"] == c["request_id"] for c in chooses)
        banks = [c["bank"] for c in chooses]
        assert all(c["move_time"] == 1.5 for c in chooses) and banks == sorted(banks, reverse=True)
        assert min(banks) > 0 and max(banks) <= 12.0
        assert all(0 < c["time_left"] <= 1.5 for c in chooses)
        assert all(c["same_legal"] and c["action"] in c["legal"] for c in chooses)
        # every event the bot saw, in order, is the replay's history up to its last request
        seen = [e for c in chooses for e in c["events"]]
        assert [_seen(e) for e in seen] == [_expected(line) for line in game[: len(seen)]]
        throws = [e for e in seen if "throw" in e]
        actions = [e for e in seen if "seat" in e]
        assert throws and all(e["counts"] == [e["throw"].count(f) for f in range(6)] for e in throws)
        assert all(e["text"] == "throw " + ",".join(e["names"]) for e in throws)
        assert any(e["forced"] for e in actions), "no forced move flagged"
        assert any(e["automatic"] and e["seat"] == 2 for e in actions), "the forfeited seat's turns"
        assert {e["seat"] for e in actions} == {0, 1, 2}
        assert {e["kind"] for e in actions} >= {"PLACE", "STOP"}
        # its own decisions come back in the events too
        mine = [e["action"] for e in actions if e["seat"] == seat and not e["forced"]]
        assert mine == [c["action"] for c in chooses][: len(mine)]


def _moves(result: MatchResult) -> list[dict[str, Any]]:
    """The replay's events without the think times."""
    return [{k: v for k, v in line.items() if k not in ("ms", "cpu_ms")} for line in replay_lines(result)]


def test_the_bot_seed_makes_a_rerun_repeat_every_choice(tmp_path: Path) -> None:
    """Same seed and seats, other match ids: the same game, move for move, for the SDK's
    ``self.rng`` and the sample random bot alike; the seats get different seeds."""
    from .conftest import SAMPLES

    runs = []
    for k, mid in enumerate(("first-id", "another-id")):
        files = [tmp_path / f"{k}-seat0.jsonl", tmp_path / f"{k}-seat1.jsonl"]
        seats = [
            Seat(BOTS / "recorder_bot.py", {"SDK_RECORD": str(files[0])}),
            Seat(SAMPLES / "random_bot.py"),
            Seat(BOTS / "recorder_bot.py", {"SDK_RECORD": str(files[1])}),
        ]
        result = play(seats, seed=23, control=TimeControl(2.0, 20.0), match_id=mid)
        assert result.match_id == mid and not result.forfeits
        runs.append((result, [records(f) for f in files]))
    (a, rec_a), (b, rec_b) = runs
    assert _moves(a) == _moves(b) and a.scores == b.scores
    assert [ln.get("action") for ln in rec_a[0]] == [ln.get("action") for ln in rec_b[0]]
    seeds = {rec_a[s][1]["bot_seed"] for s in (0, 1)}
    assert len(seeds) == 2 and 23 not in seeds
    # another match seed: other dice and other bot seeds
    assert bot_seed(24, 0) != bot_seed(23, 0) and bot_seed(23, 0) != bot_seed(23, 1)
