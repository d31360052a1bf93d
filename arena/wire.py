"""Engine <-> protobuf conversion: the one module that knows both the engine and arena.v1."""

from __future__ import annotations

from arena.engine import State, scores
from arena.engine.board import LOUNGERS, N_FACES, N_LOUNGERS, TRACK_NAMES, track_name
from arena.engine.state import Phase
from arena.engine.variants import DEFAULT, Rules
from arena.v1 import arena_pb2 as pb

PROTOCOL = "arena.v1"
LOUNGER_NAMES = tuple(lo.name for lo in LOUNGERS)
TRACK = TRACK_NAMES

_PHASE_TO_PB = {
    Phase.SETUP: pb.PHASE_SETUP,
    Phase.THROW: pb.PHASE_THROW,
    Phase.ROLL: pb.PHASE_ROLL,
    Phase.ACTION: pb.PHASE_ACTION,
    Phase.OVER: pb.PHASE_OVER,
}
_PHASE_FROM_PB = {v: k for k, v in _PHASE_TO_PB.items()}
_TRACK_INDEX = {name: position - 1 for position, name in enumerate(TRACK_NAMES)}  # parse_track's answers


class WireError(ValueError):
    """A protobuf message that does not describe a valid engine value."""


def state_to_pb(state: State) -> pb.GameState:
    """The full engine state as a GameState message."""
    return pb.GameState(
        players=state.players,
        phase=_PHASE_TO_PB[state.phase],
        seat=state.seat,
        round=state.round,
        turn=state.turn,
        throw_no=state.throw_no,
        dice_to_throw=state.dice,
        kept=state.kept,
        last_throw=state.last,
        result=state.result,
        lifeguard=track_name(state.guard),
        towel=state.towel,
        secured=state.secured,
        figure=state.figure,
        towels=state.towels,
        figures=state.figures,
        chips=state.chips,
        scores=scores(state),
        pool=state.pool,
        final_round=state.final_round,
    )


def state_from_pb(msg: pb.GameState, rules: Rules = DEFAULT) -> State:
    """The engine state a GameState message describes (what the SDK hands to bots), played under
    ``rules`` (the match's rules, named once in the Welcome's ``rules_version``: the GameState
    does not repeat them).

    Raises :class:`WireError` when array lengths or enum values are out of range.
    """
    n = msg.players
    if not 2 <= n <= 4:
        raise WireError(f"players must be 2..4, got {n}")
    # each repeated field read once, sliced (a plain list) before the tuple: the cheapest way out of
    # protobuf's containers (this runs in every SDK bot for every decision)
    towel, secured, figure = tuple(msg.towel[:]), tuple(msg.secured[:]), tuple(msg.figure[:])
    towels, figures, chips = tuple(msg.towels[:]), tuple(msg.figures[:]), tuple(msg.chips[:])
    kept, last, result = tuple(msg.kept[:]), tuple(msg.last_throw[:]), tuple(msg.result[:])
    if not len(towel) == len(secured) == len(figure) == N_LOUNGERS:
        raise WireError(f"towel, secured and figure need {N_LOUNGERS} entries each")
    if not len(towels) == len(figures) == len(chips) == n:
        raise WireError("towels, figures and chips need one entry per player")
    if not len(kept) == len(last) == len(result) == N_FACES:
        raise WireError(f"kept, last_throw and result need {N_FACES} counts each")
    phase = _PHASE_FROM_PB.get(msg.phase)
    guard = _TRACK_INDEX.get(msg.lifeguard)
    if phase is None:
        raise WireError(f"bad phase or lifeguard field: unknown phase {msg.phase}")
    if guard is None:
        raise WireError(f"bad phase or lifeguard field: unknown track field {msg.lifeguard!r}")
    s = State.__new__(State)
    s.phase = phase
    s.guard = guard
    s.players = n
    s.seat = msg.seat
    s.round = msg.round
    s.turn = msg.turn
    s.throw_no = msg.throw_no
    s.dice = msg.dice_to_throw
    s.kept = kept
    s.last = last
    s.result = result
    s.towel = towel
    s.secured = secured
    s.figure = figure
    s.towels = towels
    s.figures = figures
    s.chips = chips
    s.pool = msg.pool
    s.occupied = sum(1 for sec, fig in zip(secured, figure, strict=True) if sec or fig >= 0)
    s.final_round = msg.final_round
    s.termination = None
    s.rules = rules
    s._legal = None
    return s
