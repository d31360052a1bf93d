"""Worth corrections learned from the search's own games: rollout-measured action values.

The search values a lounger action by a hand-made model (:class:`arena.strength.worth.Potential`).
This module measures what the actions are really worth when the search plays on, and learns one
correction per (kind of action, lounger value) from it.

Collecting (:func:`collect`): games of the search in one seat against the greedy
(:class:`arena.strength.greedy.OnePlyGreedy`) in the others, the search's seat rotating with the
seed.  At every action decision of the search with two or more lounger actions legal, every legal
action (PASS included) is taken and the game is finished ``rollouts`` times, all of them played
by the same policies; the dice of rollout ``r`` are the same for every action of the decision
(common random numbers: the differences between actions are measured on the same throws).  A
record keeps, per action, the search's worth and the mean final margin (points minus the mean of
the others', R27) -- its **Q value**.

Fitting (:func:`fit`): for every (kind, value), the correction is the mean over the records of
``(Q(a) - Q(pass)) - worth(a)``: how much the model over- or under-values that kind of action.
The 4-player table (``weights/calibration-4p.json``, 2026-12-03) is the fit of the records
shipped beside it (``calibration-4p-records.jsonl.gz``: 198 decisions of 36 games, seeds
6000-6019 and 6100-6115, 16 rollouts per action): an INVADE of a 2 or a 3 is worth 0.6-0.75
points less than the model says and one of a 4 0.24 less (the owner of a 2 or 3 takes the lounger
back easily; a 4 is harder to reclaim and worth 3 to CONQUER), a CONQUER 0.2-0.75 more (the
figure's point it replaces was at risk), a RECLAIM of a 3 0.57 less; FLIPs and TAKE_FIVE are
within 0.2.  Some rows rest on few samples (CONQUER 6-17 per value; no FLIP or RECLAIM of a 4
was among the measured decisions, so those stay 0).

The 2-player table (``weights/calibration-2p.json``) is the fit of ``calibration-2p-records.jsonl.gz``
(987 decisions of 103 games, seeds 7000-7047 and 7100-7154, 16 rollouts per action): INVADE of a
2 0.74 less, RECLAIM of a 2 / 3 0.75 / 0.47 less, FLIP of a 2 / 3 0.30 / 0.31 less, CONQUER of a
2 1.0 more; no table for 3 players.

Using (:class:`Calibration`): the search adds ``Params.calibration`` times the correction to
each action's worth (its rolling leaves and its action choice alike).  The table is one step of
policy iteration: measured under the search as it played then; a new table would be measured
under the calibrated search.

    python -m arena.strength.calibration collect --players 4 --seeds 6000:6100 --out q.jsonl
    python -m arena.strength.calibration fit q.jsonl --players 4 \
        --out arena/strength/weights/calibration-4p.json
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from arena.engine import (
    Action,
    ActionKind,
    DiceStream,
    Phase,
    State,
    apply,
    apply_throw,
    format_action,
    legal_actions,
    new_game,
    play_out,
)
from arena.engine.board import LOUNGER_VALUE, REGULAR

from .worth import Worths, score_margin

KINDS = ("flip", "reclaim", "invade", "conquer")
FORMAT = "pool-arena-calibration-1"


class CalibrationError(Exception):
    """A calibration table or record file that cannot be read (what was wrong is in the text)."""


def kind_of(state: State, lounger: int) -> str:
    """The kind of lounger action the seat to act would take on regular lounger ``lounger``
    (R19-R22): its own towel, plain, FLIP or (with a figure) RECLAIM; another's, INVADE or (with
    the actor's figure) CONQUER."""
    me = state.seat
    if state.towel[lounger] == me:
        return "flip" if state.figure[lounger] < 0 else "reclaim"
    return "conquer" if state.figure[lounger] == me else "invade"


@dataclass(frozen=True)
class Calibration:
    """Per kind, by lounger value (index 0..5, 2-4 used), the points to add to a worth; ``five``
    for TAKE_FIVE; ``samples`` and ``five_samples`` how many measured actions each rests on."""

    players: int
    corrections: dict[str, tuple[float, ...]]
    five: float
    samples: dict[str, tuple[int, ...]]
    five_samples: int = 0

    def apply(self, state: State, worths: Worths, scale: float = 1.0) -> Worths:
        """``worths`` with ``scale`` times the corrections added (PASS stays 0)."""
        acts = list(worths.acts)
        for i in REGULAR:
            a = acts[i]
            if a is None:
                continue
            fix = self.corrections[kind_of(state, i)][LOUNGER_VALUE[i]]
            acts[i] = (a[0] + scale * fix, a[1])
        five = None if worths.five is None else worths.five + scale * self.five
        return replace(worths, acts=tuple(acts), five=five)

    def to_json(self) -> dict[str, Any]:
        """The table as stored (``FORMAT``)."""
        return {
            "format": FORMAT,
            "players": self.players,
            "corrections": {k: list(v) for k, v in self.corrections.items()},
            "five": self.five,
            "samples": {k: list(v) for k, v in self.samples.items()},
            "five_samples": self.five_samples,
        }

    @classmethod
    def from_json(cls, data: object) -> Calibration:
        """Read a stored table; :class:`CalibrationError` says what is wrong."""
        try:
            assert isinstance(data, dict) and data.get("format") == FORMAT, f"not a {FORMAT} table"
            corr = {k: tuple(float(x) for x in data["corrections"][k]) for k in KINDS}
            samples = {k: tuple(int(x) for x in data["samples"][k]) for k in KINDS}
            assert all(len(v) == 6 for v in corr.values()), "a correction row is not 6 values"
            return cls(int(data["players"]), corr, float(data["five"]), samples, int(data["five_samples"]))
        except (AssertionError, KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"a calibration table that cannot be read: {exc}") from None


@cache
def shipped(players: int) -> Calibration | None:
    """The table shipped for ``players`` (``weights/calibration-<n>p.json``), or None."""
    path = resources.files("arena.strength") / "weights" / f"calibration-{players}p.json"
    if not path.is_file():
        return None
    return Calibration.from_json(json.loads(path.read_text()))


# ----------------------------------------------------------------------------- collecting


def _finish(state: State, seat: int, dice_seed: int, policies: list[Any]) -> float:
    return score_margin(play_out(state, policies, DiceStream(dice_seed)), seat)


def collect(players: int, seeds: Iterable[int], rollouts: int) -> Iterator[dict[str, Any]]:
    """Records of the search's action decisions (module docstring), one game per seed."""
    from .greedy import OnePlyGreedy
    from .search import SearchPolicy

    def policies(me: int) -> list[Any]:
        return [SearchPolicy() if s == me else OnePlyGreedy() for s in range(players)]

    for seed in seeds:
        me = seed % players
        playing = policies(me)
        dice = DiceStream(seed)
        state = new_game(players)
        while not state.is_over:
            if state.is_chance:
                state = apply_throw(state, dice.throw(state.turn, state.throw_no + 1, state.dice))
                continue
            action = playing[state.seat].choose(state)
            if state.seat == me and state.phase == Phase.ACTION:
                legal = legal_actions(state)
                if sum(a.kind != ActionKind.PASS for a in legal) >= 2:
                    yield _record(state, seed, action, legal, rollouts, playing[me], policies)
            state = apply(state, action)


def _record(state: State, seed: int, chosen: Action, legal: tuple[Action, ...], rollouts: int,
            search: Any, policies: Any) -> dict[str, Any]:  # fmt: skip
    me = state.seat
    worths = search.action_values(state)
    acts: dict[str, Any] = {}
    for a in legal:
        after = apply(state, a)
        total = 0.0
        for r in range(rollouts):
            digest = hashlib.sha256(f"{seed}:{state.turn}:{r}".encode()).hexdigest()
            total += _finish(after, me, int(digest[:15], 16), policies(me))
        if a.kind in (ActionKind.PASS, ActionKind.TAKE_FIVE):
            kind, value = ("pass" if a.kind == ActionKind.PASS else "five"), 0
        else:
            kind, value = kind_of(state, a.lounger), LOUNGER_VALUE[a.lounger]
        acts[format_action(a)] = {"kind": kind, "value": value, "worth": worths[a], "q": total / rollouts}
    return {"players": state.players, "seed": seed, "turn": state.turn, "chosen": format_action(chosen),
            "actions": acts}  # fmt: skip


# ----------------------------------------------------------------------------- fitting


def fit(records: Iterable[dict[str, Any]], players: int) -> Calibration:
    """The mean of ``(Q - Q(pass)) - worth`` per (kind, value) over ``records`` of ``players``
    (module docstring); a (kind, value) never measured gets 0."""
    sums: dict[tuple[str, int], float] = {}
    counts: dict[tuple[str, int], int] = {}
    for rec in records:
        if rec.get("players") != players:
            continue
        acts = rec["actions"]
        base = next((a["q"] for a in acts.values() if a["kind"] == "pass"), None)
        if base is None:
            continue
        for a in acts.values():
            if a["kind"] == "pass":
                continue
            key = (a["kind"], int(a["value"]))
            sums[key] = sums.get(key, 0.0) + (a["q"] - base) - a["worth"]
            counts[key] = counts.get(key, 0) + 1
    corr = {k: tuple(sums.get((k, v), 0.0) / counts[(k, v)] if (k, v) in counts else 0.0 for v in range(6))
            for k in KINDS}  # fmt: skip
    samples = {k: tuple(counts.get((k, v), 0) for v in range(6)) for k in KINDS}
    n5 = counts.get(("five", 0), 0)
    five = sums.get(("five", 0), 0.0) / n5 if n5 else 0.0
    return Calibration(players, corr, five, samples, n5)


def read_records(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """The records of JSON-lines files (gzipped if the name ends in ``.gz``);
    :class:`CalibrationError` names a bad line."""
    for path in paths:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                assert isinstance(rec, dict) and isinstance(rec["actions"], dict)
            except (ValueError, AssertionError, KeyError) as exc:
                raise CalibrationError(f"{path}:{n}: not a calibration record ({exc})") from None
            yield rec


def main(argv: list[str] | None = None) -> int:
    """``collect`` records or ``fit`` a table (module docstring)."""
    ap = argparse.ArgumentParser(
        prog="python -m arena.strength.calibration", description=(__doc__ or "").splitlines()[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="play games and measure every action of the search's decisions")
    c.add_argument("--players", type=int, default=4)
    c.add_argument("--seeds", default="6000:6100", help="FIRST:END, one game per seed")
    c.add_argument("--rollouts", type=int, default=16)
    c.add_argument("--out", type=Path, required=True, help="JSON-lines file (appended to)")
    f = sub.add_parser("fit", help="fit the corrections to collected records")
    f.add_argument("records", type=Path, nargs="+")
    f.add_argument("--players", type=int, default=4)
    f.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        first, _, end = args.seeds.partition(":")
        with args.out.open("a") as out:
            for rec in collect(args.players, range(int(first), int(end)), args.rollouts):
                out.write(json.dumps(rec) + "\n")
                out.flush()
        return 0
    try:
        table = fit(read_records(args.records), args.players)
    except (CalibrationError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(json.dumps(table.to_json(), indent=1) + "\n")
    print(json.dumps(table.to_json()["corrections"]))
    return 0


if __name__ == "__main__":
    from arena.strength.entry import run_tool

    run_tool(main)
