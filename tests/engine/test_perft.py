"""Golden "perft" files: the number of legal actions at every decision of fixed-seed games.

They pin the move generator (R8, R12, R13, R16-R24), the dice stream (§5), the end of the game
(R25, R26) and the scoring (R27, R28) together: any change shows up as a diff.  To rewrite them
after an intended rules change, run ``pytest tests/engine/test_perft.py --regen-golden``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from arena.engine import (
    DiceStream,
    apply,
    apply_throw,
    legal_actions,
    make_policy,
    new_game,
    outcome,
    play_game,
)
from arena.engine.record import RULES_VERSION

GOLDEN = Path(__file__).parent / "golden"
GAMES = [(11, "random"), (22, "random"), (33, "random"), (44, "greedy")]


def perft_game(players: int, seed: int, policy: str) -> dict[str, Any]:
    policies = [make_policy(policy, seed, seat) for seat in range(players)]
    dice = DiceStream(seed)
    s = new_game(players)
    branching: list[int] = []
    throws = 0
    while not s.is_over:
        if s.is_chance:
            s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
            throws += 1
        else:
            branching.append(len(legal_actions(s)))
            s = apply(s, policies[s.seat].choose(s))
    res = outcome(s)
    record = play_game(seed, [make_policy(policy, seed, seat) for seat in range(players)]).record
    return {
        "seed": seed,
        "policy": policy,
        "decisions": len(branching),
        "throws": throws,
        "rounds": s.round,
        "scores": list(res.scores),
        "placings": list(res.placings),
        "termination": res.termination,
        "record_sha256": hashlib.sha256(record.encode("utf-8")).hexdigest(),
        "branching": branching,
    }


def perft_file(players: int) -> dict[str, Any]:
    return {
        "rules": RULES_VERSION,
        "players": players,
        "games": [perft_game(players, seed, policy) for seed, policy in GAMES],
    }


def dump(data: dict[str, Any]) -> str:
    """One game per line, so that a diff shows which game changed."""
    games = ",\n".join("    " + json.dumps(g, separators=(",", ":")) for g in data["games"])
    return (
        "{\n"
        f'  "rules": {json.dumps(data["rules"])},\n'
        f'  "players": {data["players"]},\n'
        f'  "games": [\n{games}\n  ]\n'
        "}\n"
    )


@pytest.mark.parametrize("players", [2, 3, 4])
def test_r8_r12_r16_r28_perft_matches_golden(players: int, request: pytest.FixtureRequest) -> None:
    path = GOLDEN / f"perft_{players}p.json"
    actual = perft_file(players)
    if request.config.getoption("--regen-golden"):
        path.write_text(dump(actual), encoding="utf-8")
    assert path.exists(), f"{path} is missing; run pytest with --regen-golden"
    golden = json.loads(path.read_text(encoding="utf-8"))
    assert golden["rules"] == actual["rules"] and golden["players"] == players
    assert len(golden["games"]) == len(actual["games"])
    for want, got in zip(golden["games"], actual["games"], strict=True):
        label = f"{players}p seed {want['seed']} {want['policy']}"
        for key in ("seed", "policy", "decisions", "throws", "rounds", "scores", "placings", "termination"):
            assert got[key] == want[key], f"{label}: {key}"
        for k, (a, b) in enumerate(zip(got["branching"], want["branching"], strict=False)):
            assert a == b, f"{label}: decision {k} has {a} legal actions, golden says {b}"
        assert got["branching"] == want["branching"], label
        assert got["record_sha256"] == want["record_sha256"], label


def test_perft_golden_shape() -> None:
    """The golden files hold setup branching 24, 23, ..., 1 first (R8) and sane totals."""
    for players in (2, 3, 4):
        golden = json.loads((GOLDEN / f"perft_{players}p.json").read_text(encoding="utf-8"))
        for game in golden["games"]:
            assert game["branching"][:24] == list(range(24, 0, -1))
            assert game["decisions"] == len(game["branching"])
            assert all(b >= 1 for b in game["branching"])
            assert game["termination"] in ("normal", "round-cap")
            assert game["rounds"] <= 100
