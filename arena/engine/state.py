"""The game state: an immutable value that the rules turn into the next state.

A :class:`State` is never changed after the rules hand it out: every field is an int, a bool, a
string or a tuple, and :func:`arena.engine.rules.apply` returns a new state that shares the
unchanged tuples with the old one.  Callers read the fields; they must not assign to them.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from types import ModuleType
from typing import TYPE_CHECKING, Final

from .accel import load
from .board import (
    CHIPS_TOTAL,
    DIVING_BOARD,
    FIGURES_PER_PLAYER,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_DICE,
    N_FACES,
    N_LOUNGERS,
    TOWELS_PER_PLAYER,
)
from .variants import DEFAULT, Rules

if TYPE_CHECKING:
    from .actions import Action


class Phase(IntEnum):
    """Where the game stands.  THROW is a chance node; SETUP, ROLL and ACTION are decisions."""

    SETUP = 0  # R8: the seat to act places a towel
    THROW = 1  # R10-R13: the caller supplies a throw of ``dice`` dice
    ROLL = 2  # R12: the seat to act chooses STOP, KEEP or CHIP after a throw
    ACTION = 3  # R19-R23: the seat to act uses one reachable lounger or passes
    OVER = 4  # R25, R26: the game is over

    @property
    def label(self) -> str:
        """Lower-case name used in messages and snapshots."""
        return self.name.lower()


class Termination:
    """How a finished game ended (R25, R26)."""

    NORMAL: Final = "normal"
    ROUND_CAP: Final = "round-cap"


NO_DICE: Final = (0,) * N_FACES
# Plain ints for the hot properties: comparing an IntEnum with an int is int's own comparison,
# without looking the member up on the enum class first.
_THROW: Final = int(Phase.THROW)
_OVER: Final = int(Phase.OVER)


class State:
    """A complete, immutable game state.

    Fields (all read-only by contract):

    * ``players`` (2-4), ``phase`` (:class:`Phase`), ``seat`` (the seat to act or to throw for);
    * ``round`` and ``turn`` (both 0 during setup, then counted from 1), ``throw_no`` (throws made
      in this turn, a CHIP's re-throw included), ``dice`` (how many dice the next throw uses);
    * ``kept``, ``last``, ``result``: per-face counts (6 ints, face 5 = lifeguard) of the dice set
      aside, of the last throw (while it lies on the table), and of the turn's rolling result;
    * ``guard``: lifeguard position, -1 = diving board, 0..10 loop fields (R6);
    * per lounger (26): ``towel`` owner seat or -1, ``secured`` (guest side up), ``figure`` owner
      seat or -1;
    * per seat: ``towels`` and ``figures`` in supply, ``chips`` held; ``pool`` chips left;
    * ``occupied``: loungers with a secured towel or a figure (R25); ``final_round``: R25 has
      triggered and the game ends when this round completes; ``termination`` once over;
    * ``rules``: the :class:`~arena.engine.variants.Rules` this game is played under (R25, R26
      read their thresholds from it); it never changes during a game.
    """

    __slots__ = (
        "_legal",
        "chips",
        "dice",
        "figure",
        "figures",
        "final_round",
        "guard",
        "kept",
        "last",
        "occupied",
        "phase",
        "players",
        "pool",
        "result",
        "round",
        "rules",
        "seat",
        "secured",
        "termination",
        "throw_no",
        "towel",
        "towels",
        "turn",
    )

    players: int
    phase: Phase
    seat: int
    round: int
    turn: int
    throw_no: int
    dice: int
    kept: tuple[int, ...]
    last: tuple[int, ...]
    result: tuple[int, ...]
    guard: int
    towel: tuple[int, ...]
    secured: tuple[bool, ...]
    figure: tuple[int, ...]
    towels: tuple[int, ...]
    figures: tuple[int, ...]
    chips: tuple[int, ...]
    pool: int
    occupied: int
    final_round: bool
    termination: str | None
    rules: Rules
    _legal: tuple[Action, ...] | None

    def _copy(self) -> State:
        """A shallow copy for the rules to fill in before handing it out (tuples are shared)."""
        s = State.__new__(State)
        s.players = self.players
        s.phase = self.phase
        s.seat = self.seat
        s.round = self.round
        s.turn = self.turn
        s.throw_no = self.throw_no
        s.dice = self.dice
        s.kept = self.kept
        s.last = self.last
        s.result = self.result
        s.guard = self.guard
        s.towel = self.towel
        s.secured = self.secured
        s.figure = self.figure
        s.towels = self.towels
        s.figures = self.figures
        s.chips = self.chips
        s.pool = self.pool
        s.occupied = self.occupied
        s.final_round = self.final_round
        s.termination = self.termination
        s.rules = self.rules
        s._legal = None
        return s

    @property
    def is_chance(self) -> bool:
        """True when the next event is a throw that the caller supplies."""
        return self.phase == _THROW

    @property
    def is_over(self) -> bool:
        """True once the game has ended (R25, R26)."""
        return self.phase == _OVER

    @property
    def unoccupied(self) -> int:
        """Loungers, of all 26, that carry neither a secured towel nor a figure (R25)."""
        return N_LOUNGERS - self.occupied

    def key(self) -> tuple[object, ...]:
        """Every field as one tuple: equal keys mean equal states."""
        return (
            self.players,
            int(self.phase),
            self.seat,
            self.round,
            self.turn,
            self.throw_no,
            self.dice,
            self.kept,
            self.last,
            self.result,
            self.guard,
            self.towel,
            self.secured,
            self.figure,
            self.towels,
            self.figures,
            self.chips,
            self.pool,
            self.occupied,
            self.final_round,
            self.termination,
            self.rules.version,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return (
            f"<State players={self.players} phase={self.phase.label} seat={self.seat} "
            f"round={self.round} turn={self.turn} unoccupied={self.unoccupied}>"
        )


def _configure_copy(module: ModuleType) -> Callable[[State], State]:
    """The compiled ``State._copy`` (``_statecopy.c``), told this class's slots."""
    module.configure(State, "_legal", State._copy)
    compiled: Callable[[State], State] = module.copy
    return compiled


#: ``clone(state)`` is ``state._copy()``: the compiled copy when it is built, else the method.
clone: Final[Callable[[State], State]] = load("arena.engine._statecopy", _configure_copy) or State._copy


def new_game(players: int, rules: Rules = DEFAULT) -> State:
    """The state before the first setup placement (R4, R5, R7, R8), played under ``rules``
    (the standard rules unless a variant is chosen; see :mod:`arena.engine.variants`)."""
    if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {players!r}")
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be an arena.engine.variants.Rules, got {rules!r}")
    s = State.__new__(State)
    s.players = players
    s.phase = Phase.SETUP
    s.seat = 0
    s.round = 0
    s.turn = 0
    s.throw_no = 0
    s.dice = N_DICE
    s.kept = NO_DICE
    s.last = NO_DICE
    s.result = NO_DICE
    s.guard = DIVING_BOARD
    s.towel = (-1,) * N_LOUNGERS
    s.secured = (False,) * N_LOUNGERS
    s.figure = (-1,) * N_LOUNGERS
    s.towels = (TOWELS_PER_PLAYER,) * players
    s.figures = (FIGURES_PER_PLAYER,) * players
    s.chips = (0,) * players
    s.pool = CHIPS_TOTAL
    s.occupied = 0
    s.final_round = False
    s.termination = None
    s.rules = rules
    s._legal = None
    return s
