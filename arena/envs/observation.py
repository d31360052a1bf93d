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

from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from arena.engine import Phase, Rules, State, Termination, new_game, scores
from arena.engine.board import (
    BLOCKED,
    CHIPS_TOTAL,
    FIGURES_PER_PLAYER,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_DICE,
    N_FACES,
    N_LOUNGERS,
    TOWELS_PER_PLAYER,
    TRACK_LEN,
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
    Piece("blocked", (N_LOUNGERS,), "per lounger: 1 when the lifeguard blocks it where he stands now"),
    Piece("lifeguard", (TRACK_LEN + 1,), "lifeguard position one-hot: 0 diving board, 1-11 the loop (R6)"),
    Piece("towels", (S,), "per relative seat: towels in supply / 16"),
    Piece("figures", (S,), "per relative seat: figures in supply / 5"),
    Piece("chips", (S,), "per relative seat: chips held / 4"),
    Piece("scores", (S,), f"per relative seat: current score (R27) / {SCORE_SCALE:g}"),
    Piece("seats", (S,), "per relative seat: 1 when that seat plays (2-4 players)"),
    Piece("to_act", (S,), "relative seat to act (or to throw for), one-hot; all 0 once the game is over"),
    Piece("phase", (5,), "phase one-hot: setup, throw, roll, action, over"),
    Piece("kept", (N_FACES,), "dice kept this turn, per face (green..blue, lifeguard) / 6"),
    Piece("throw", (N_FACES,), "the last throw on the table, per face / 6 (roll phase)"),
    Piece("result", (N_FACES,), "the turn's rolling result, per face / 6 (action phase)"),
    Piece("dice", (1,), "dice the next throw uses / 6"),
    Piece("throw_no", (1,), f"throws made this turn / {MAX_THROWS}"),
    Piece("pool", (1,), "chips left in the pool / 16"),
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
_BLOCKED: Final = [np.array([i in b for i in range(N_LOUNGERS)], np.float32) for b in BLOCKED]
_LIFEGUARD: Final = np.eye(TRACK_LEN + 1, dtype=np.float32)


class _BoardCache:
    """The board part of the last observation per seat: the rules share unchanged tuples between
    states, so while the same towel/secured/figure tuples are seen from a seat it is reused (the
    cache holds the tuples, so their identities cannot be reused by other objects)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[tuple[int, int], tuple[object, object, object, Observation]] = {}

    def board(self, state: State, seat: int) -> Observation:
        key = (state.players, seat)
        hit = self.entries.get(key)
        if hit is not None and hit[0] is state.towel and hit[1] is state.figure and hit[2] is state.secured:
            return hit[3]
        rel = _RELATIVE[state.players][seat]
        towel = _ONEHOT[rel[np.asarray(state.towel) + 1]].ravel()
        figure = _ONEHOT[rel[np.asarray(state.figure) + 1]].ravel()
        secured = np.asarray(state.secured, np.float32)
        block = np.concatenate((towel, secured, figure))
        self.entries[key] = (state.towel, state.figure, state.secured, block)
        return block


_cache = _BoardCache()


def _scale(round_cap: int) -> npt.NDArray[np.float32]:
    per_seat = (
        [1 / TOWELS_PER_PLAYER] * S
        + [1 / FIGURES_PER_PLAYER] * S
        + [1 / MAX_CHIPS] * S
        + [1 / SCORE_SCALE] * S
    )
    rest = [1.0] * (2 * S + 5) + [1 / N_DICE] * (3 * N_FACES + 1)
    rest += [1 / MAX_THROWS, 1 / CHIPS_TOTAL, 1 / round_cap, 1.0, 1 / N_LOUNGERS]
    return np.array(per_seat + rest, np.float32)


_SCALES: dict[int, npt.NDArray[np.float32]] = {}
_PHASE_ROWS: Final = tuple(tuple(1 if k == p else 0 for k in range(5)) for p in range(5))
_PADS: Final = {n: (0,) * (S - n) for n in range(2, S + 1)}
_SEATS: Final = {n: (1,) * n + (0,) * (S - n) for n in range(2, S + 1)}
_TO_ACT: Final = tuple(tuple(1 if k == r else 0 for k in range(S)) for r in range(S))


def encode(state: State, seat: int) -> Observation:
    """The observation of ``state`` from seat ``seat``'s point of view (see :data:`LAYOUT`)."""
    n = state.players
    if not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1} for {n} players, got {seat}")
    cap = state.rules.round_cap
    scale = _SCALES.get(cap)
    if scale is None:
        scale = _SCALES[cap] = _scale(cap)
    pad = _PADS[n]
    pts = scores(state)
    phase = int(state.phase)
    raw = (
        state.towels[seat:]
        + state.towels[:seat]
        + pad
        + state.figures[seat:]
        + state.figures[:seat]
        + pad
        + state.chips[seat:]
        + state.chips[:seat]
        + pad
        + pts[seat:]
        + pts[:seat]
        + pad
        + _SEATS[n]
        + ((0,) * S if phase == 4 else _TO_ACT[(state.seat - seat) % n])
        + _PHASE_ROWS[phase]
        + state.kept
        + state.last
        + state.result
        + (
            state.dice,
            min(state.throw_no, MAX_THROWS),
            state.pool,
            state.round,
            1 if state.final_round else 0,
            N_LOUNGERS - state.occupied,
        )
    )
    return np.concatenate(
        (
            _cache.board(state, seat),
            _BLOCKED[state.guard + 1],
            _LIFEGUARD[state.guard + 1],
            np.array(raw, np.float32) * scale,
        )
    )


def mask(state: State) -> Mask:
    """The legal-action mask: int8, 1 at the index of every legal action (all 0 when nobody
    decides: at a chance node or once the game is over)."""
    from arena.engine import legal_actions

    out = np.zeros(N_ACTIONS, np.int8)
    legal = legal_actions(state)
    if legal:
        index = INDEX
        out[[index[a] for a in legal]] = 1
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
    check = ValueError(f"not an observation of this layout (seats flag {n} players)")
    if not MIN_PLAYERS <= n <= S:
        raise check
    s = new_game(n, rules)._copy()

    def owner(one_hot: npt.NDArray[np.float32]) -> tuple[int, ...]:
        return tuple(int(np.argmax(row)) if row.max() > 0.5 else -1 for row in one_hot)

    s.towel = owner(v["towel"])
    s.figure = owner(v["figure"])
    s.secured = tuple(bool(x > 0.5) for x in v["secured"])
    s.guard = int(np.argmax(v["lifeguard"])) - 1
    s.towels = ints("towels", TOWELS_PER_PLAYER)[:n]
    s.figures = ints("figures", FIGURES_PER_PLAYER)[:n]
    s.chips = ints("chips", MAX_CHIPS)[:n]
    s.phase = Phase(int(np.argmax(v["phase"])))
    s.seat = int(np.argmax(v["to_act"])) if v["to_act"].max() > 0.5 else 0
    s.kept, s.last, s.result = ints("kept", N_DICE), ints("throw", N_DICE), ints("result", N_DICE)
    s.dice = ints("dice", N_DICE)[0]
    s.throw_no = ints("throw_no", MAX_THROWS)[0]
    s.pool = ints("pool", CHIPS_TOTAL)[0]
    s.round = ints("round", rules.round_cap)[0]
    s.final_round = bool(v["final_round"][0] > 0.5)
    s.occupied = N_LOUNGERS - ints("unoccupied", N_LOUNGERS)[0]
    if s.round:
        s.turn = (s.round - 1) * n + s.seat + 1
    if s.phase == Phase.OVER:
        s.termination = Termination.NORMAL if s.final_round else Termination.ROUND_CAP
    return s
