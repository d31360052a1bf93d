"""The engine agrees with its reference implementation (issue 20).

:mod:`arena.engine.reference` is the frozen, unoptimised engine that :mod:`arena.engine` was
optimised from.  On random games of 2, 3 and 4 players (Hypothesis draws the seed and a
random/greedy mix) both must give the same dice, the same legal actions in the same order, the
same state after every step (and after every *other* legal action too), the same scores and the
same record text; illegal actions and bad throws must fail in both with the same error.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arena.engine as fast
import arena.engine.reference as ref
from arena.engine.actions import ACTIONS_BY_TEXT, Action, ActionKind
from arena.engine.chance import _FACE_OF_BYTE, _SKIPPED_BYTES, _faces_walked
from arena.engine.record import _dumps
from arena.engine.reference.policies import Policy as RefPolicy

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EVERY_ACTION = tuple(ACTIONS_BY_TEXT.values())
seeds = st.integers(min_value=0, max_value=2**63 - 1)


def outcome_of(call: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """``("ok", result)`` or ``(exception type name, message)``: what ``call(*args)`` did."""
    try:
        return ("ok", call(*args))
    except Exception as exc:  # the point is to compare whatever happened
        return (type(exc).__name__, str(exc))


def same_step(a: tuple[str, Any], b: tuple[str, Any]) -> None:
    """Two outcomes of apply/apply_throw agree: equal states (by key) or the same error."""
    assert a[0] == b[0], (a, b)
    if a[0] == "ok":
        assert a[1].key() == b[1].key()
    else:
        assert a[1] == b[1]


def lockstep(seed: int, names: Sequence[str], *, every_action: bool, probe: random.Random) -> None:
    """Play one game with both engines side by side and compare everything at every step."""
    players = len(names)
    fast_pols = [fast.make_policy(n, seed, k) for k, n in enumerate(names)]
    ref_pols = [ref.make_policy(n, seed, k) for k, n in enumerate(names)]
    fast_dice, ref_dice = fast.DiceStream(seed), ref.DiceStream(seed)
    f, r = fast.new_game(players), ref.new_game(players)
    while True:
        assert f.key() == r.key()
        assert (f.is_over, f.is_chance) == (r.is_over, r.is_chance)
        assert fast.legal_actions(f) == ref.legal_actions(r)
        assert fast.reachable(f) == ref.reachable(r)
        if f.is_over:
            break
        if f.is_chance:
            faces = fast_dice.throw(f.turn, f.throw_no + 1, f.dice)
            assert faces == ref_dice.throw(r.turn, r.throw_no + 1, r.dice)
            f, r = fast.apply_throw(f, faces), ref.apply_throw(r, faces)
            continue
        legal = fast.legal_actions(f)
        action = fast_pols[f.seat].choose(f)
        assert action == ref_pols[r.seat].choose(r)
        if every_action:
            for other in legal:
                same_step(outcome_of(fast.apply, f, other), outcome_of(ref.apply, r, other))
        for other in probe.sample(EVERY_ACTION, 3):  # mostly illegal ones: the same error
            same_step(outcome_of(fast.apply, f, other), outcome_of(ref.apply, r, other))
        f, r = fast.apply(f, action), ref.apply(r, action)
    assert fast.scores(f) == ref.scores(r)
    assert fast.outcome(f).termination == r.termination


def ref_pols_for(names: Sequence[str], seed: int) -> list[RefPolicy]:
    return [ref.make_policy(n, seed, k) for k, n in enumerate(names)]


def same_record(seed: int, names: Sequence[str]) -> None:
    """Whole games: the same final state, scores and record text."""
    got = fast.play_game(seed, [fast.make_policy(n, seed, k) for k, n in enumerate(names)])
    want = ref.play_game(seed, ref_pols_for(names, seed))
    assert got.final.key() == want.final.key()
    assert got.outcome.scores == want.scores and got.outcome.placings == want.placings
    assert got.record == want.record
    assert fast.replay(got.record).final.key() == want.final.key()


@pytest.mark.parametrize("players", [2, 3, 4])
@SETTINGS
@given(seed=seeds, data=st.data())
def test_engine_and_reference_agree_on_random_games(players: int, seed: int, data: st.DataObject) -> None:
    names = data.draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=players, max_size=players))
    lockstep(seed, names, every_action=False, probe=random.Random(seed))
    same_record(seed, names)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_legal_action_agrees_in_fixed_games(players: int) -> None:
    """Every legal action (CHIP, RECLAIM, CONQUER, ... that random play rarely picks) at every
    decision of a random and a greedy game gives the same state in both engines."""
    lockstep(500 + players, ["random"] * players, every_action=True, probe=random.Random(players))
    lockstep(600 + players, ["greedy"] * players, every_action=True, probe=random.Random(players))


def test_sprint_rules_agree() -> None:
    for seed in range(3):
        pols = [fast.make_policy("random", seed, k) for k in range(3)]
        got = fast.play_game(seed, pols, rules=fast.by_name("sprint"))
        want = ref.play_game(seed, ref_pols_for(["random"] * 3, seed), rules=fast.by_name("sprint"))
        assert got.record == want.record and got.final.key() == want.final.key()


def throw_state(players: int = 2) -> tuple[fast.State, ref.State]:
    """The first chance node of a game in both engines (after setup)."""
    f, r = fast.new_game(players), ref.new_game(players)
    while not f.is_chance:
        a = fast.legal_actions(f)[0]
        f, r = fast.apply(f, a), ref.apply(r, a)
    return f, r


class Index:
    """An int-like face (``__index__`` and ordering), as numpy integers are."""

    def __init__(self, v: int) -> None:
        self.v = v

    def __index__(self) -> int:
        return self.v

    def __lt__(self, other: int) -> bool:
        return self.v < other

    def __repr__(self) -> str:
        return f"Index({self.v})"


BAD_AND_ODD_THROWS: list[Any] = [
    (0, 1, 2, 3, 4, 5),
    [5, 5, 5, 5, 5, 5],
    (True, False, True, 2, 3, 4),
    (0.0, 1, 2, 3, 4, 5),
    (0, 1, 2, 3, 4, 6),
    (0, 1, 2, 3, 4, -1),
    (0, 1, 2, 3, 4, 300),
    (0, 1, 2, 3, 4),
    (0, 1, 2, 3, 4, 5, 0),
    "abcdef",
    b"\x00\x01\x02\x03\x04\x05",
    bytearray(b"\x05\x04\x03\x02\x01\x00"),
    [0, 1, 2, 3, 4, "5"],
    [0, 1, 2, 3, 4, None],
    [Index(0), Index(1), Index(2), Index(3), Index(4), Index(5)],
    (1 + 0j, 1, 2, 3, 4, 5),
]


@pytest.mark.parametrize("faces", BAD_AND_ODD_THROWS, ids=repr)
def test_bad_and_odd_throws_fail_or_pass_alike(faces: Any) -> None:
    f, r = throw_state()
    same_step(outcome_of(fast.apply_throw, f, faces), outcome_of(ref.apply_throw, r, faces))
    # a second time, with the fast engine's tables warm
    same_step(outcome_of(fast.apply_throw, f, faces), outcome_of(ref.apply_throw, r, faces))
    over_f, over_r = fast.new_game(2), ref.new_game(2)  # not a chance node
    same_step(outcome_of(fast.apply_throw, over_f, faces), outcome_of(ref.apply_throw, over_r, faces))


def test_a_float_throw_is_refused_even_after_the_same_int_throw() -> None:
    """The fast engine remembers throws by their bytes; 1.0 == 1 must not sneak in through that."""
    f, _ = throw_state()
    fast.apply_throw(f, (1, 1, 2, 2, 3, 3))
    with pytest.raises(fast.IllegalThrowError, match=r"integers 0\.\.5"):
        fast.apply_throw(f, (1.0, 1, 2, 2, 3, 3))


ODD_ACTIONS: list[Any] = [
    Action(ActionKind.STOP),
    Action(ActionKind.KEEP, -1, (1, 0, 0, 0, 0)),
    Action(ActionKind.KEEP, -1, [1, 0, 0, 0, 0]),  # unhashable: equal to nothing legal
    Action(2, -1, (1, 0, 0, 0, 0)),  # type: ignore[arg-type]  # a plain int kind equals the enum
    Action(ActionKind.KEEP, -1, (6, 0, 0, 0, 0)),
    Action(ActionKind.PLACE, 0),
    Action(ActionKind.PLACE, 24),
    Action(ActionKind.PASS),
    "stop",
    "chip",
    "keep green=1",
    "pass",
    "place green-4a",
    "take-five five-1",
]


@pytest.mark.parametrize("action", ODD_ACTIONS, ids=repr)
def test_odd_actions_apply_or_fail_alike_in_every_phase(action: Any) -> None:
    rng = random.Random(7)
    f, r = fast.new_game(3), ref.new_game(3)
    dice = fast.DiceStream(99)
    while not f.is_over and f.turn < 12:
        same_step(outcome_of(fast.apply, f, action), outcome_of(ref.apply, r, action))
        if f.is_chance:
            faces = dice.throw(f.turn, f.throw_no + 1, f.dice)
            f, r = fast.apply_throw(f, faces), ref.apply_throw(r, faces)
        else:
            a = rng.choice(fast.legal_actions(f))
            f, r = fast.apply(f, a), ref.apply(r, a)


def test_dice_stream_agrees() -> None:
    rng = random.Random(3)
    for _ in range(300):
        seed, turn, throw = rng.randrange(2**63), rng.randrange(500), rng.randrange(30)
        assert fast.stream_faces(seed, turn, throw) == ref.stream_faces(seed, turn, throw)
        stream_f, stream_r = fast.DiceStream(seed), ref.DiceStream(seed)
        for k in (-1, 0, 1, 5, 6, 7):
            assert stream_f.throw(turn, throw, k) == stream_r.throw(turn, throw, k)
    assert fast.stream_faces(True, True, False) == ref.stream_faces(True, True, False)  # "True:True:False"
    assert fast.DiceStream(5).throw(True, 1, 6) == ref.DiceStream(5).throw(True, 1, 6)
    for bad in (-1, 2**63):
        assert outcome_of(fast.DiceStream, bad) == outcome_of(ref.DiceStream, bad)
        assert outcome_of(fast.stream_faces, bad, 1, 1) == outcome_of(ref.stream_faces, bad, 1, 1)


def test_walking_the_blocks_agrees_with_the_translate_shortcut() -> None:
    """The byte-by-byte walk (used only when a block has fewer than 6 faces) gives what one
    ``bytes.translate`` gives whenever the first block is enough; and it walks on when it is not."""
    rng = random.Random(4)
    for _ in range(2000):
        block = bytes(rng.choice([rng.randrange(252, 256), rng.randrange(256)]) for _ in range(32))
        short = block.translate(_FACE_OF_BYTE, _SKIPPED_BYTES)
        if len(short) >= 6:
            assert _faces_walked(block) == tuple(short[:6])
    skipped = bytes([255] * 30 + [7, 8])  # two faces in the first block, four from the next
    walked = _faces_walked(skipped)
    assert walked[:2] == (1, 2) and len(walked) == 6 and all(0 <= x < 6 for x in walked)


def test_random_policy_draws_what_random_choice_draws() -> None:
    state = fast.new_game(4)
    for n in range(1, 25):
        policy, rng = fast.RandomPolicy(f"s{n}"), random.Random(f"s{n}")
        legal = fast.legal_actions(state)[:n]
        state_n = fast.from_snapshot(fast.to_snapshot(state))
        state_n._legal = legal
        assert [policy.choose(state_n) for _ in range(50)] == [rng.choice(legal) for _ in range(50)]
    policy = fast.RandomPolicy(1)
    policy.rng = random.Random(2)  # a replaced generator is used as it is
    assert policy.choose(state) == random.Random(2).choice(fast.legal_actions(state))
    over = fast.new_game(2)
    over._legal = ()
    with pytest.raises(IndexError):
        fast.RandomPolicy(1).choose(over)


def plain_decision_line(before: fast.State, action: Action, **extra: Any) -> str:
    """The decision line as the unoptimised RecordWriter built it."""
    legal = fast.legal_actions(before)
    line: dict[str, Any] = {"seat": before.seat, "legal": [str(a) for a in legal], "action": str(action)}
    if len(legal) == 1:
        line["forced"] = True
    line.update(extra)
    return _dumps(line)


EXTRAS: list[dict[str, Any]] = [
    {},
    {"ms": 12},
    {"ms": 3.5, "away_ms": 0, "cpu_ms": 1.25},
    {"auto": True, "note": 'caf\u00e9 \u2028 \ud800 \x85 "quoted" \\ back'},
    {"seat": 7},  # an extra key that replaces a standard one keeps its place
    {"forced": False, "ms": 1},
    {"legal": []},
    {"throw": "y"},
]


@pytest.mark.parametrize("extra", EXTRAS, ids=repr)
def test_record_lines_are_what_json_dumps_writes(extra: dict[str, Any]) -> None:
    """RecordWriter builds the lines of rolling decisions and throws from cached canonical text;
    they must be exactly what the plain ``_dumps`` of the line's dict gives, extras included."""
    rng = random.Random(11)
    writer = fast.RecordWriter(3, 5)
    want: list[str] = []
    s = fast.new_game(3)
    dice = fast.DiceStream(5)
    while s.turn < 15:
        if s.is_chance:
            faces = dice.throw(s.turn, s.throw_no + 1, s.dice)
            writer.throw(faces, **extra)
            want.append(_dumps({"throw": fast.format_throw(faces), **extra}))
            s = fast.apply_throw(s, faces)
            continue
        legal = fast.legal_actions(s)
        action = rng.choice(legal)
        # the interned action, and an equal but different object (formatted as it is)
        for a in (action, Action(action.kind, action.lounger, tuple(action.keep))):
            writer.decision(s, a, **extra)
            want.append(plain_decision_line(s, a, **extra))
        s = fast.apply(s, action)
    assert writer.lines[1:] == want


def test_threads_playing_at_once_agree_with_the_reference() -> None:
    """The engine's tables are shared by every thread; games played in 4 threads at once (on
    seeds no other test uses, so the threads meet new throws together) still agree."""
    errors: list[BaseException] = []

    def play(seed: int) -> None:
        try:
            same_record(seed, ["random", "random", "random", "random"])
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(7_000_000 + k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
