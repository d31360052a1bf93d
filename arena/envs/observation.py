"""The observation of a state as a flat numpy vector (float32, every entry in [0, 1]), and the mask.

The observation is **egocentric**: seats are given relative to the observer, slot 0 is the
observer, slot 1 the next seat in turn order, and so on; there are always 4 slots (unused ones
are 0 and flagged in ``seats``), so the layout is the same for 2, 3 and 4 players.  The game has
perfect information: every player sees the whole state, so observations of different players
differ only by this rotation.

:data:`LAYOUT` lists the pieces in order (name, shape, meaning); :func:`views` cuts an
observation into them.  The table in ``docs/envs.md`` is generated from :data:`LAYOUT`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from types import ModuleType
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from arena.engine import Action, Phase, Rules, State, Termination, from_snapshot, legal_actions, scores
from arena.engine.accel import load
from arena.engine.board import (
    BLOCKED,
    CHIPS_TOTAL,
    FACES,
    FIGURES_PER_PLAYER,
    LOUNGER_VALUE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_DICE,
    N_FACES,
    N_LOUNGERS,
    TOWELS_PER_PLAYER,
    TRACK_LEN,
    track_name,
)
from arena.engine.board import CHIPS_MAX_HELD as MAX_CHIPS
from arena.engine.variants import DEFAULT

from .actions import INDEX, N_ACTIONS

Observation = npt.NDArray[np.float32]
Mask = npt.NDArray[np.int8]

#: A bound on any seat's score (R27): 16 towels on the two fives, eight 4s and six 3s (60), five
#: figures (5) and four chips (2) make at most 67.
SCORE_SCALE: Final = 70.0
#: Throws in one turn: at most 6 without chips, plus one per chip spent (at most 4 held).
MAX_THROWS: Final = 10


class Piece(NamedTuple):
    """One named part of the observation vector."""

    name: str
    shape: tuple[int, ...]
    meaning: str

    @property
    def size(self) -> int:
        """Entries of the piece."""
        return int(np.prod(self.shape))


S = MAX_PLAYERS
LAYOUT: Final = (
    Piece("towel", (N_LOUNGERS, S), "per lounger (id order), whose towel lies there: relative seat one-hot"),
    Piece("secured", (N_LOUNGERS,), "per lounger: 1 when its towel is secured (guest side up)"),
    Piece("figure", (N_LOUNGERS, S), "per lounger: whose guest figure lies there, relative seat one-hot"),
    Piece("towels", (S,), "per relative seat: towels in supply / 16"),
    Piece("figures", (S,), "per relative seat: figures in supply / 5"),
    Piece("chips", (S,), "per relative seat: chips held / 4"),
    Piece("scores", (S,), f"per relative seat: current score (R27) / {SCORE_SCALE:g}"),
    Piece("seats", (S,), "per relative seat: 1 when that seat plays (2-4 players)"),
    Piece("pool", (1,), "chips left in the pool / 16"),
    Piece("blocked", (N_LOUNGERS,), "per lounger: 1 when the lifeguard blocks it where he stands now"),
    Piece("lifeguard", (TRACK_LEN + 1,), "lifeguard position one-hot: 0 diving board, 1-11 the loop (R6)"),
    Piece("to_act", (S,), "relative seat to act (or to throw for), one-hot; all 0 once the game is over"),
    Piece("phase", (5,), "phase one-hot: setup, throw, roll, action, over"),
    Piece("kept", (N_FACES,), "dice kept this turn, per face (green..blue, lifeguard) / 6"),
    Piece("throw", (N_FACES,), "the last throw on the table, per face / 6 (roll phase)"),
    Piece("result", (N_FACES,), "the turn's rolling result, per face / 6 (action phase)"),
    Piece("dice", (1,), "dice the next throw uses / 6"),
    Piece("throw_no", (1,), f"throws made this turn / {MAX_THROWS}"),
    Piece("round", (1,), "round / the round cap (R26) of the game's rules"),
    Piece("final_round", (1,), "1 once the last round has begun (R25)"),
    Piece("unoccupied", (1,), "loungers not occupied / 26"),
)
OBS_SIZE: Final = sum(p.size for p in LAYOUT)
OFFSETS: Final = {p.name: sum(q.size for q in LAYOUT[:k]) for k, p in enumerate(LAYOUT)}

# One-hot rows: index 0..3 a relative seat, 4 nobody.
_ONEHOT: Final = np.vstack([np.eye(S, dtype=np.float32), np.zeros((1, S), np.float32)])
# _RELATIVE[players][seat][owner + 1]: the one-hot row of absolute owner ``owner`` (-1 nobody).
_RELATIVE: Final = {
    n: [np.array([S] + [(owner - seat) % n for owner in range(n)], np.intp) for seat in range(n)]
    for n in range(2, S + 1)
}
# Blocked loungers and the lifeguard's one-hot, by position + 1.
_GUARD: Final = tuple(
    np.concatenate(
        (
            np.array([i in b for i in range(N_LOUNGERS)], np.float32),
            np.eye(TRACK_LEN + 1, dtype=np.float32)[k],
        )
    )
    for k, b in enumerate(BLOCKED)
)
_PER_SEAT_SCALE: Final = np.array(
    [1 / TOWELS_PER_PLAYER] * S
    + [1 / FIGURES_PER_PLAYER] * S
    + [1 / MAX_CHIPS] * S
    + [1 / SCORE_SCALE] * S
    + [1.0] * S
    + [1 / CHIPS_TOTAL],
    np.float32,
)
_PADS: Final = {n: (0,) * (S - n) for n in range(2, S + 1)}
_SEATS: Final = {n: (1,) * n + (0,) * (S - n) for n in range(2, S + 1)}


_Ints = tuple[int, ...]
_BoardEntry = tuple[int, _Ints, _Ints, tuple[bool, ...], _Ints, _Ints, _Ints, bytes]


class _BoardCache:
    """The slow-changing part of an observation (board, supplies, scores, seats, pool) per
    (players, seat).  The rules share unchanged tuples between states, so while a seat sees the
    same towel/secured/figure/towels/figures/chips tuples the part is reused (the cache holds
    the tuples, so their identities cannot be taken by other objects).  Scores depend only on
    the board and the chips, the pool only on the chips (R5: chips are conserved)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        # entries[seat]: (players, towel, figure, secured, chips, towels, figures, the bytes)
        self.entries: list[_BoardEntry | None] = [None] * S

    def board(self, state: State, seat: int) -> bytes:
        """The float32 bytes of the board, supplies, scores, seats and pool pieces."""
        hit = self.entries[seat]
        if (
            hit is not None
            and hit[1] is state.towel
            and hit[2] is state.figure
            and hit[3] is state.secured
            and hit[4] is state.chips
            and hit[5] is state.towels
            and hit[6] is state.figures
            and hit[0] == state.players
        ):
            return hit[7]
        n = state.players
        pts = scores(state)
        pad = _PADS[n]
        raw = (
            state.towels[seat:] + state.towels[:seat] + pad
            + state.figures[seat:] + state.figures[:seat] + pad
            + state.chips[seat:] + state.chips[:seat] + pad
            + pts[seat:] + pts[:seat] + pad
            + _SEATS[n]
            + (state.pool,)
        )  # fmt: skip
        block = b"".join(
            (
                _owners(state.towel, n, seat),
                _SECURED.get(state.secured) or _secured(state.secured),
                _owners(state.figure, n, seat),
                _SUPPLIES.pack(*[v * s for v, s in zip(raw, _PER_SEAT_SCALES, strict=True)]),
            )
        )
        self.entries[seat] = (
            n, state.towel, state.figure, state.secured, state.chips, state.towels, state.figures, block
        )  # fmt: skip
        return block


# Value caches under the identity cache (bounded: cleared when full): the towel and figure
# layouts change a few times a game, the secured flags once per flip.
_CACHE_LIMIT: Final = 1 << 14
_OWNERS: dict[tuple[tuple[int, ...], int, int], bytes] = {}
_SECURED: dict[tuple[bool, ...], bytes] = {}
_PER_SEAT_SCALES: Final = tuple(float(x) for x in _PER_SEAT_SCALE)
_SUPPLIES: Final = struct.Struct(f"<{len(_PER_SEAT_SCALES)}f")


def _owners(owners: tuple[int, ...], n: int, seat: int) -> bytes:
    """Per lounger, the relative-seat one-hot of its owner (``-1``: nobody), as float32 bytes."""
    key = (owners, n, seat)
    hit = _OWNERS.get(key)
    if hit is None:
        if len(_OWNERS) >= _CACHE_LIMIT:
            _OWNERS.clear()
        rel = _RELATIVE[n][seat]
        hit = _OWNERS[key] = _ONEHOT[rel[np.asarray(owners) + 1]].tobytes()
    return hit


def _secured(flags: tuple[bool, ...]) -> bytes:
    if len(_SECURED) >= _CACHE_LIMIT:
        _SECURED.clear()
    hit = _SECURED[flags] = np.asarray(flags, np.float32).tobytes()
    return hit


_cache = _BoardCache()
_F32: Final = np.dtype(np.float32)


def _f32(values: list[float]) -> bytes:
    return np.array(values, np.float32).tobytes()


# The fast-changing pieces as ready float32 bytes, looked up and joined (no array arithmetic on
# the hot path): the guard pieces by position, to_act + phase, each dice piece by its counts,
# (dice, throw_no), the round per round cap, (final_round, unoccupied).
_GUARD_BYTES: Final = tuple(g.tobytes() for g in _GUARD)
_ACT_PHASE: Final = {
    (r, p): _f32(
        [1.0 if (k == r and p != int(Phase.OVER)) else 0.0 for k in range(S)]
        + [float(k == p) for k in range(5)]
    )
    for r in range(S)
    for p in range(5)
}
_COUNTS: dict[tuple[int, ...], bytes] = {}
_DICE_THROWS: Final = {
    (d, k): _f32([d / N_DICE, k / MAX_THROWS]) for d in range(N_DICE + 1) for k in range(MAX_THROWS + 1)
}
_ROUNDS: dict[int, tuple[bytes, ...]] = {}
_FINAL_UNOCCUPIED: Final = {
    (f, u): _f32([float(f), u / N_LOUNGERS]) for f in (False, True) for u in range(N_LOUNGERS + 1)
}


def _counts(counts: tuple[int, ...]) -> bytes:
    hit = _COUNTS.get(counts)
    if hit is None:
        hit = _COUNTS[counts] = _f32([c / N_DICE for c in counts])
    return hit


def _rounds(cap: int) -> tuple[bytes, ...]:
    hit = _ROUNDS.get(cap)
    if hit is None:
        hit = _ROUNDS[cap] = tuple(_f32([r / cap]) for r in range(cap + 1))
    return hit


# The clock pieces (lifeguard, who acts, phase, round, final round, unoccupied loungers) change a
# few times a turn: one bounded cache of their ready bytes, one lookup a step instead of four (the
# cost of an observation is Python operations, not bytes).  The dice pieces vary too much for one
# cache of their combinations (most would miss): each is looked up by its counts.
_CLOCK_PART: dict[tuple[int, ...], tuple[bytes, bytes, bytes, bytes]] = {}


def _clock_part(key: tuple[int, ...]) -> tuple[bytes, bytes, bytes, bytes]:
    guard, rel, phase, cap, rnd, final, occupied = key
    if len(_CLOCK_PART) >= _CACHE_LIMIT:
        _CLOCK_PART.clear()
    hit = _CLOCK_PART[key] = (
        _GUARD_BYTES[guard + 1],
        _ACT_PHASE[(rel, phase)],
        _rounds(cap)[rnd],
        _FINAL_UNOCCUPIED[(bool(final), N_LOUNGERS - occupied)],
    )
    return hit


def encode_python(state: State, seat: int) -> Observation:
    """The observation of ``state`` from seat ``seat``'s point of view (see :data:`LAYOUT`).
    A new writable array each time.  The definition of the observation: :func:`encode` is this
    function or its compiled copy (``arena/envs/_obsfast.c``), which returns the same vector."""
    n = state.players
    if not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1} for {n} players, got {seat}")
    ckey = (
        state.guard, (state.seat - seat) % n, state.phase, state.rules.round_cap, state.round,
        state.final_round, state.occupied,
    )  # fmt: skip
    clock = _CLOCK_PART.get(ckey) or _clock_part(ckey)
    throw_no = state.throw_no
    data = b"".join(
        (
            _cache.board(state, seat),
            clock[0],
            clock[1],
            _COUNTS.get(state.kept) or _counts(state.kept),
            _COUNTS.get(state.last) or _counts(state.last),
            _COUNTS.get(state.result) or _counts(state.result),
            _DICE_THROWS[(state.dice, throw_no if throw_no < MAX_THROWS else MAX_THROWS)],
            clock[2],
            clock[3],
        )
    )
    return np.frombuffer(bytearray(data), _F32)


def _configure_encoder(module: ModuleType) -> Callable[[State, int], Observation]:
    """The compiled encoder (``_obsfast.c``), given this module's tables."""
    module.configure(_compiled_settings())
    compiled: Callable[[State, int], Observation] = module.encode
    return compiled


def _compiled_settings() -> dict[str, object]:
    """Every size, scale, table and callable the compiled encoder takes from this module."""
    return {
        "loungers": N_LOUNGERS,
        "track": TRACK_LEN,
        "faces": N_FACES,
        "n_dice": N_DICE,
        "max_throws": MAX_THROWS,
        "phases": len(Phase),
        "over_phase": int(Phase.OVER),
        "obs_size": OBS_SIZE,
        "towel_scale": _PER_SEAT_SCALES[0],
        "figure_scale": _PER_SEAT_SCALES[S],
        "chip_scale": _PER_SEAT_SCALES[2 * S],
        "score_scale": _PER_SEAT_SCALES[3 * S],
        "pool_scale": _PER_SEAT_SCALES[5 * S],
        "blocked": tuple(tuple(sorted(b)) for b in BLOCKED),
        "layout": tuple((p.name, p.size) for p in LAYOUT),
        "state_type": State,
        "phase_type": Phase,
        "values": LOUNGER_VALUE,
        "fallback": encode_python,
        "empty": np.empty,
        "dtype": _F32,
    }


_COMPILED: Final = load("arena.envs._obsfast", _configure_encoder)
#: Which encoder :func:`encode` is: ``"compiled"`` or ``"python"``.
ENCODER: Final = "python" if _COMPILED is None else "compiled"
#: The observation of ``state`` from seat ``seat``'s point of view (see :data:`LAYOUT`): a new
#: writable float32 array each time.  The compiled encoder when it is built, else
#: :func:`encode_python` (the definition; both give the same vector, bit for bit).
encode: Final[Callable[[State, int], Observation]] = _COMPILED or encode_python


_ROLL_PHASE: Final = int(Phase.ROLL)
_ROLL_MASKS: dict[int, tuple[tuple[Action, ...], Mask]] = {}
_MASKS: dict[tuple[Action, ...], Mask] = {}


def mask(state: State) -> Mask:
    """The legal-action mask: int8, 1 at the index of every legal action (all 0 when nobody
    decides: at a chance node or once the game is over).  Read-only: masks are shared between
    states with the same legal actions."""
    legal = legal_actions(state)
    roll = state.phase == _ROLL_PHASE
    if roll:  # the engine interns the rolling phase's tuples: found by identity
        hit = _ROLL_MASKS.get(id(legal))
        if hit is not None and hit[0] is legal:
            return hit[1]
    else:
        found = _MASKS.get(legal)
        if found is not None:
            return found
    out = np.zeros(N_ACTIONS, np.int8)
    if legal:
        index = INDEX
        out[[index[a] for a in legal]] = 1
    out.flags.writeable = False
    if roll:
        if len(_ROLL_MASKS) < _CACHE_LIMIT:
            _ROLL_MASKS[id(legal)] = (legal, out)  # the tuple is held, so its id stays its own
    else:
        if len(_MASKS) >= _CACHE_LIMIT:
            _MASKS.clear()
        _MASKS[legal] = out
    return out


def views(obs: Observation) -> dict[str, npt.NDArray[np.float32]]:
    """The named pieces of an observation (numpy views, reshaped as in :data:`LAYOUT`)."""
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"an observation has shape ({OBS_SIZE},), got {obs.shape}")
    return {p.name: obs[OFFSETS[p.name] : OFFSETS[p.name] + p.size].reshape(p.shape) for p in LAYOUT}


def markdown_table() -> str:
    """The layout table of ``docs/envs.md``."""
    rows = ["| offset | piece | shape | meaning |", "|---:|---|---|---|"]
    for p in LAYOUT:
        shape = " × ".join(str(d) for d in p.shape)
        rows.append(f"| {OFFSETS[p.name]} | `{p.name}` | {shape} | {p.meaning} |")
    rows.append(f"| {OBS_SIZE} | | | (size of the vector) |")
    return "\n".join(rows)


def decode(obs: Observation, rules: Rules = DEFAULT) -> State:
    """The engine state an observation shows, **seen from the observer**: the observer sits in
    seat 0, the next seat in turn order in seat 1, and so on (the observation is egocentric).
    So a policy over observations can use every engine helper (``legal_actions``, ``apply``,
    ``scores`` ...) on it.  ``rules`` must be the game's rules (the observation gives the round
    relative to the round cap).  Not in the observation, and so reconstructed: ``turn`` (from
    the round and seat) and, for a finished game, how it ended (round cap when the last round
    had not begun)."""
    v = views(obs)

    def ints(name: str, scale: float) -> tuple[int, ...]:
        return tuple(round(float(x) * scale) for x in v[name].ravel())

    n = round(float(v["seats"].sum()))
    if not MIN_PLAYERS <= n <= S:
        raise ValueError(f"not an observation of this layout (seats flag {n} players)")

    def owner(one_hot: npt.NDArray[np.float32]) -> list[int | None]:
        return [int(np.argmax(row)) if row.max() > 0.5 else None for row in one_hot]

    def dice(name: str) -> dict[str, int]:
        return {FACES[f]: c for f, c in enumerate(ints(name, N_DICE)) if c}

    towel, figure = owner(v["towel"]), owner(v["figure"])
    phase = Phase(int(np.argmax(v["phase"])))
    seat = int(np.argmax(v["to_act"])) if v["to_act"].max() > 0.5 else 0
    rnd = ints("round", rules.round_cap)[0]
    final_round = bool(v["final_round"][0] > 0.5)
    termination = None
    if phase == Phase.OVER:
        termination = Termination.NORMAL if final_round else Termination.ROUND_CAP
    # Through the engine's public snapshot form (rules.md names), so the engine's internals may change.
    return from_snapshot(
        {
            "players": n,
            "phase": phase.label,
            "seat": seat,
            "round": rnd,
            "turn": (rnd - 1) * n + seat + 1 if rnd else 0,
            "throw_no": ints("throw_no", MAX_THROWS)[0],
            "dice_to_throw": ints("dice", N_DICE)[0],
            "kept": dice("kept"),
            "last_throw": dice("throw"),
            "result": dice("result"),
            "lifeguard": track_name(int(np.argmax(v["lifeguard"])) - 1),
            "loungers": [
                {
                    "towel": towel[i],
                    "side": "guest" if v["secured"][i] > 0.5 else "plain",
                    "figure": figure[i],
                }
                for i in range(N_LOUNGERS)
            ],
            "towels": ints("towels", TOWELS_PER_PLAYER)[:n],
            "figures": ints("figures", FIGURES_PER_PLAYER)[:n],
            "chips": ints("chips", MAX_CHIPS)[:n],
            "pool": ints("pool", CHIPS_TOTAL)[0],
            "final_round": final_round,
            "termination": termination,
            "rules": rules.version,
        }
    )
