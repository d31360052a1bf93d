"""The search player: exact expectimax over the turn's rolling, future-aware action worths.

How it decides
==============
* **Setup** (R8): a fixed preference by lounger value (``Params.setup``), the leftmost free
  lounger within a value.  Options, off by default (measured no better, see
  :meth:`Params.for_players`): less ``rows`` for every own towel of that value already laid,
  colour rules (``spread``, ``wide``, ``rival``) and the learned value of the state after the
  placement (``setup_net``, :mod:`arena.strength.value`).
* **Rolling** (R10-R15): :class:`arena.strength.rolling.TurnPlanner`, the exact expectimax over the
  whole rest of the turn (every STOP / KEEP / CHIP, every outcome of every throw with its exact
  probability), its leaves the best lounger action each result reaches, valued by the worth model.
* **Action** (R19-R23): the legal action of the highest worth.
* **Calibration** (2 and 4 players): the worths corrected by what rollouts of the search's own
  games measured each kind of action to be worth (:mod:`arena.strength.calibration`,
  ``Params.calibration``).

Worths (the leaf evaluation)
----------------------------
Worths are points of margin, PASS = 0 (:mod:`arena.strength.worth`).  By default they come from
:class:`arena.strength.worth.Potential` (an own plain towel likely to be flipped anyway is worth
less than its face value; the RECLAIM/CONQUER race; chips; potentials fading towards the end),
with two refinements here:

* **opponents modelled** (3-4 players, ``Params.focus``): what an action takes from one opponent
  is weighted by how close that opponent is to me (a point taken from the player I am racing for
  a placing counts more than one taken from a player far behind or far ahead: the pairwise share
  of R28 moves only where the race is close);
* **the last turn** of the game (R25: the final round, the last seat): the worth of an action is
  the pairwise result it gives (beating each opponent is worth ``Params.last_turn_scale`` points,
  a tie half), plus a small tie-break by margin, so the rolling plays for the win.

The **leaf-evaluation hook**: a :class:`WorthModel` (anything with ``worths(state) -> Worths``)
replaces the potentials; :class:`ValueWorths` turns a learned state value ``value(state, seat) ->
expected final margin`` into one (worth of an action = value after it minus value after
passing).  ``SearchPolicy(worth_model=...)`` or, for the bot, the environment variable
``SEARCH_BOT_VALUE=package.module:name`` (a ``WorthModel``, or a value callable; see
:func:`load_worth_model`).

Determinism and time
--------------------
No clock and no randomness: the search is exact and small (a decision takes a few milliseconds
on average; the worst case, a fresh turn with chips to spend, about 20-30 ms of one core), so the same
state always gives the same choice, on an idle machine or a loaded one.  The planner may spend
at most ``Params.max_spend`` chips in one turn (the others stay held): a fixed bound on the tree,
not a time limit (2 instead of 4 changed nothing measurable: +144 and +144 Elo against the greedy
in the same 160 four-player in-process games).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from arena.engine import Action, ActionKind, Phase, State, apply, legal_actions, scores
from arena.engine.board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    FIVES,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    N_LOUNGERS,
    REGULAR,
)

from .calibration import Calibration, shipped
from .rolling import TurnPlanner
from .worth import ByValue, Potential, Worths, invade_gain

# the two-wide colours, two loungers of every value (green, yellow, blue; R3)
WIDE = frozenset(c for c in range(N_COLOURS) if sum(LOUNGER_COLOUR[j] == c for j in REGULAR) == 6)
StateValue = Callable[[State, int], float]  # (state, seat) -> expected final margin of that seat


class WorthModel(Protocol):
    """The leaf evaluation: the worths of the seat to act's lounger actions this turn."""

    def worths(self, state: State) -> Worths:
        """Worths for the seat to act of ``state`` (rolling or action phase, or the throw before)."""
        ...


@dataclass(frozen=True)
class Params:
    """The search's weights (see the module docstring)."""

    potential: Potential = field(default_factory=Potential)
    setup: ByValue = (0.0, 0.0, 3.0, 2.0, 1.0, 0.0)  # placement preference by value
    spread: float = 0.0  # setup: minus this per own towel already in the lounger's colour
    wide: float = 0.0  # setup: plus this for a two-wide colour (green, yellow, blue)
    rival: float = 0.0  # setup: plus this per other player's towel already in the lounger's colour
    rows: float = 0.0  # setup: minus this per own towel already of the lounger's value
    setup_net: float = 0.0  # setup: plus this times the learned value of the state after placing
    # setup: a preference per colour and value (index colour * 3 + value - 2, 15 entries) used
    # instead of ``setup`` by value when given (off; measured worse, see ``for_players``)
    setup_class: tuple[float, ...] = ()
    focus: float = 0.0  # opponent modelling: 0 = off; else closeness scale (points per sqrt round)
    last_turn_scale: float = 10.0  # points per opponent beaten, in the game's last turn (0 = off)
    final_round_result: bool = False  # every seat's turn in the final round plays for the result
    max_spend: int = 2  # chips the planner may spend in one turn (1..4): bounds the tree
    risk: float = 0.0  # rolling for the result: 0 = off (expected worth), else RiskAttitude's scale
    # (2 = +233 against +212 Elo in 400 two-player games, but no gain on top of ``wide``: off)
    calibration: float = 0.0  # times the rollout-learned corrections (:mod:`.calibration`), 0 = off

    def __post_init__(self) -> None:
        if not 1 <= self.max_spend <= 4:  # a turn holds at most four chips' worth of re-throws
            raise ValueError(f"max_spend is 1 to 4 chips, got {self.max_spend!r}")
        if not isinstance(self.setup, tuple) or len(self.setup) != 6:
            raise ValueError(f"setup has one preference per value 0 to 5 (6), got {self.setup!r}")
        if not isinstance(self.setup_class, tuple) or len(self.setup_class) not in (0, N_COLOURS * 3):
            raise ValueError(
                f"setup_class has one preference per colour and value ({N_COLOURS * 3}, index "
                f"colour * 3 + value - 2), got {self.setup_class!r}"
            )

    @staticmethod
    def for_players(players: int) -> Params:
        """The tuned defaults for a table of ``players`` (duplicate-dice duels against the one-ply
        greedy, :mod:`arena.strength.duel`; 200 games each): the 3s first in setup, then the 2s
        (2 players) or the 4s (3-4 players); in 2 players a RECLAIM/CONQUER race worth twice as
        much as with more players (with one opponent the race is one's own to win or lose); in 2
        players, within a value, a lounger of a two-wide colour first (``wide`` 0.5: +232 Elo
        on average over five seed ranges of 400 two-player games against +203 without it, every
        range at or above; 2026-12-02).

        Setup rules tried and left off (in-process four-player duels against the greedy):
        ``rows`` 0.5 looked like +144 against +106 on 200 games (seeds 2000-2049) and was
        +105 against +109 on 400 fresh games (seeds 3000-3099); ``setup_net`` 4 +107; the
        colour rules ``spread``, ``rival`` and ``wide`` +81 to +106 (200 games).  A preference per
        colour and value learned offline (``setup_class``: 11,515 four-player games with the
        search laying its towels at random, its final margin regressed on its towels per colour
        and value; 2026-12-05) ranks the values as the default does when averaged over the colours
        (3s +0.64, 4s +0.51, 2s +0.05 points over a green 2), and its colour differences, followed,
        cost 24 Elo ([-46, -1], 800 paired games, seeds 6000...).

        In 4 players the rollout-learned corrections (:mod:`.calibration`) at half weight
        (``calibration`` 0.5; 2026-12-03, 400 in-process games per seed range against the greedy):
        +125 / +108 / +110 against +109 / +102 / +97 on seeds 3000, 4000, 5000, and +118 against
        +94 on the record's seeds 1000000; at full weight +103 (seeds 4000).  In 2 players its own
        table (fitted from 987 decisions of 103 two-player games), also at half weight (2026-12-03,
        400 in-process games per range): on eight seed ranges (2000, 3000, 4000, 5000, 8000, 9000,
        11000, 12000) +231 / +253 / +246 / +233 / +220 / +212 / +235 / +219 against +249 / +207 /
        +226 / +245 / +210 / +206 / +221 / +214 uncalibrated (+9 on average, six of eight up); a
        quarter weight +228 on the first four (+232 uncalibrated), full weight +184 / +228.

        In 4 players a chip is worth 0.55 points while the end is far (``Potential.chip``; 0.45
        elsewhere): paired against the 0.45 default on the same 1,600 in-process games per seed
        range (2026-12-03, thirteenth session), +10 (seeds 3000-3399) and +12 (5000-5399) Elo,
        each about +-9; 0.35 / 0.65 / 0.8 measured -1 / -2 / -6."""
        if players == 2:
            return Params(
                potential=Potential(rho=(0.0, 0.0, 0.3, 0.24, 0.2, 0.0)),
                setup=(0.0, 0.0, 2.0, 3.0, 1.0, 0.0),
                wide=0.5,
                calibration=0.5,
            )
        setup: ByValue = (0.0, 0.0, 1.0, 3.0, 2.0, 0.0)
        if players == 4:
            return Params(potential=Potential(chip=0.55), setup=setup, calibration=0.5)
        return Params(setup=setup)


# ----------------------------------------------------------------------------- worth models


def is_last_turn(state: State) -> bool:
    """True when this is the game's last turn: the final round (R25) and the last seat."""
    return state.final_round and state.seat == state.players - 1


def pairwise(points: Sequence[float], me: int) -> float:
    """The pairwise result of ``me`` (1 per opponent below, 1/2 per equal), over opponents."""
    mine = points[me]
    total = 0.0
    for seat, p in enumerate(points):
        if seat != me:
            total += 1.0 if mine > p else 0.5 if mine == p else 0.0
    return total / (len(points) - 1)


def _after(state: State, action: Action) -> State | None:
    """The state after the seat to act takes the lounger ``action`` this turn (any dice that
    reach it), or None if no result could make it legal.  The lifeguard stays where he is unless
    he blocks the lounger; then he is treated as being on the diving board."""
    s = state._copy()
    s.phase = Phase.ACTION
    counts = [0] * 6
    if action.kind == ActionKind.TAKE_FIVE:
        counts[0] = 5
    elif action.kind != ActionKind.PASS:
        i = action.lounger
        counts[LOUNGER_COLOUR[i]] = LOUNGER_VALUE[i]
        if i in BLOCKED[state.guard + 1]:
            s.guard = -1
    s.result = tuple(counts)
    if action not in legal_actions(s):
        return None
    return apply(s, action)


class LastTurn:
    """Worths in the game's last turn: the pairwise result (module docstring)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def worths(self, state: State) -> Worths:
        """Worth = scale x (pairwise result after the action - after passing) + margin / 100."""
        me = state.seat
        base = scores(state)
        n = state.players

        def utility(pts: Sequence[float]) -> float:
            margin = pts[me] - (sum(pts) - pts[me]) / (n - 1)
            return self.scale * pairwise(pts, me) + 0.01 * margin

        held = state.chips[me]
        u0 = utility(base)
        acts: list[tuple[float, bool] | None] = [None] * N_LOUNGERS
        five = None
        for i in range(N_LOUNGERS):
            for kind in (ActionKind.FLIP, ActionKind.RECLAIM, ActionKind.INVADE, ActionKind.CONQUER,
                         ActionKind.TAKE_FIVE):  # fmt: skip
                a = Action(kind, i)
                after = _after(state, a)
                if after is None:
                    continue
                pts = list(scores(after))
                pts[me] -= after.chips[me] // 2 - held // 2  # chips are valued separately
                u = utility(pts) - u0
                if kind == ActionKind.TAKE_FIVE:
                    five = u if five is None else max(five, u)
                else:
                    acts[i] = (u, kind == ActionKind.INVADE)
                break
        # a chip is worth what its point does to the result (R27: one point per two chips)
        chip_value = tuple(
            utility([p + (c // 2 - held // 2 if s == me else 0) for s, p in enumerate(base)]) - u0
            for c in range(CHIPS_MAX_HELD + 1)
        )
        return Worths(state.guard, tuple(acts), five, chip_value, held + state.pool)


class ValueWorths:
    """A :class:`WorthModel` from a state value ``value(state, seat)`` (expected final margin of
    ``seat``): an action is worth the value after it minus the value after passing.  Chips are
    valued ``chip`` points each; an INVADE's chips are inside the value after it."""

    def __init__(self, value: StateValue, chip: float = 0.45) -> None:
        self.value = value
        self.chip = chip

    def worths(self, state: State) -> Worths:
        """The worths of the seat to act's lounger actions by the value function."""
        me = state.seat
        passed = _after(state, Action(ActionKind.PASS))
        assert passed is not None
        v0 = self.value(passed, me)
        acts: list[tuple[float, bool] | None] = [None] * N_LOUNGERS
        five = None
        for i in range(N_LOUNGERS):
            for kind in (ActionKind.FLIP, ActionKind.RECLAIM, ActionKind.INVADE, ActionKind.CONQUER,
                         ActionKind.TAKE_FIVE):  # fmt: skip
                after = _after(state, Action(kind, i))
                if after is None:
                    continue
                u = self.value(after, me) - v0
                if kind == ActionKind.TAKE_FIVE:
                    five = u if five is None else max(five, u)
                else:
                    acts[i] = (u, False)
                break
        chip_value = tuple(self.chip * c for c in range(CHIPS_MAX_HELD + 1))
        return Worths(state.guard, tuple(acts), five, chip_value, state.chips[me] + state.pool)


class RiskAttitude:
    """Rolling for the result, not for points (R28): the planner's leaves valued by the chance
    to finish above each opponent rather than by the worth itself.

    With ``d_j`` my estimated lead over opponent ``j`` now (:meth:`Potential.estimates`, my chips
    held now left out: the leaf adds the chips left after rolling) and ``x`` a leaf's worth plus
    chip value, the leaf's utility is ``mean_j Phi((d_j + x) / sigma)``, ``sigma = scale *
    sqrt(rounds left + 1)``: the spread the rest of the game adds.  Far from the end (``sigma``
    large) or in a close race this is nearly linear, so the planner plays for points as before;
    near the end, a player well ahead rolls safe and a player behind takes the long shot."""

    def __init__(self, leads: Sequence[float], sigma: float) -> None:
        self.leads = tuple(leads)
        self.sigma = sigma
        self._k = 1.0 / (sigma * math.sqrt(2.0))
        self._n = len(self.leads)

    @classmethod
    def of(cls, state: State, potential: Potential, scale: float) -> RiskAttitude:
        """The attitude of the seat to act in ``state`` (its turn, any phase before the action)."""
        me = state.seat
        est = potential.estimates(state)
        mine = est[me] - potential.chip_value(state, state.chips[me])
        leads = [mine - est[j] for j in range(state.players) if j != me]
        return cls(leads, scale * math.sqrt(potential.rounds_left(state) + 1.0))

    def utility(self, x: float) -> float:
        """The expected pairwise result (0..1) of a leaf worth ``x`` points of margin."""
        k = self._k
        return sum(0.5 * (1.0 + math.erf((d + x) * k)) for d in self.leads) / self._n


class FocusedPotential:
    """:class:`Potential` with the opponents modelled (module docstring): what an action takes
    from opponent ``j`` is weighted by ``closeness(j)``, normalised over the opponents."""

    def __init__(self, potential: Potential, focus: float) -> None:
        self.potential = potential
        self.focus = focus

    def weights(self, state: State) -> list[float]:
        """Per seat: the weight of a point that seat loses (0 for the seat to act)."""
        me = state.seat
        n = state.players
        est = [float(x) for x in scores(state)]
        for i in REGULAR:
            o = state.towel[i]
            if o >= 0 and not state.secured[i] and state.figure[i] < 0:
                est[o] += 0.25 * LOUNGER_VALUE[i]
        sigma = 2.0 + self.focus * math.sqrt(self.potential.rounds_left(state) + 1.0)
        raw = [0.0 if s == me else math.exp(-(((est[me] - est[s]) / sigma) ** 2)) + 0.05 for s in range(n)]
        total = sum(raw)
        return [r / total for r in raw]

    def worths(self, state: State) -> Worths:
        """The potential worths, re-weighting the loss of each opponent."""
        base = self.potential.worths(state)
        if state.players == 2 or self.focus <= 0:
            return base
        w = self.weights(state)
        even = 1.0 / (state.players - 1)
        me = state.seat
        fade = self.potential.fade(state)
        lam = [x * fade for x in self.potential.lam]
        rho = [x * fade for x in self.potential.rho]
        acts = list(base.acts)
        for i in REGULAR:
            a = acts[i]
            if a is None:
                continue
            v = LOUNGER_VALUE[i]
            owner, fig = state.towel[i], state.figure[i]
            if owner == me and fig >= 0:  # RECLAIM: the intruder's loss
                loss = 1 + rho[v] * (v - 2)
                acts[i] = (a[0] + loss * (w[fig] - even), a[1])
            elif owner != me and fig < 0:  # INVADE: the owner's potential
                loss = (lam[v] - rho[v]) * v
                acts[i] = (a[0] + loss * (w[owner] - even), a[1])
            elif fig == me:  # CONQUER: the owner's race
                loss = rho[v] * v
                acts[i] = (a[0] + loss * (w[owner] - even), a[1])
        return replace(base, acts=tuple(acts))


class Calibrated:
    """A worth model with the rollout-learned corrections added (:mod:`.calibration`)."""

    def __init__(self, model: WorthModel, table: Calibration, scale: float) -> None:
        self.model = model
        self.table = table
        self.scale = scale

    def worths(self, state: State) -> Worths:
        """The model's worths plus ``scale`` times the table's corrections."""
        return self.table.apply(state, self.model.worths(state), self.scale)


def load_worth_model(spec: str) -> WorthModel:
    """The worth model ``package.module:name`` names: a :class:`WorthModel` instance, a class or
    factory returning one, or a state value ``(state, seat) -> float`` (wrapped in
    :class:`ValueWorths`).  Raises ``ValueError`` with what was wrong."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"a worth model is 'package.module:name', got {spec!r}")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load the worth model {spec!r}: {exc}") from None
    if hasattr(obj, "worths") and not isinstance(obj, type):
        return obj  # type: ignore[no-any-return]
    if isinstance(obj, type):
        made = obj()
        if hasattr(made, "worths"):
            return made  # type: ignore[no-any-return]
        raise ValueError(f"{spec!r} is a class without a worths(state) method")
    if callable(obj):
        return ValueWorths(obj)
    raise ValueError(f"{spec!r} is neither a worth model nor a value function")


# ----------------------------------------------------------------------------- the player


class SearchPolicy:
    """The search player (module docstring): ``choose(state) -> Action``, deterministic."""

    def __init__(self, params: Params | None = None, worth_model: WorthModel | None = None) -> None:
        self.fixed_params = params
        self.worth_model = worth_model
        self._plan_key: tuple[object, ...] | None = None
        self._planner: TurnPlanner | None = None
        self._worths: Worths | None = None

    def params(self, state: State) -> Params:
        """The weights in use for this table size."""
        return self.fixed_params or Params.for_players(state.players)

    def model(self, state: State) -> WorthModel:
        """The worth model for this state (the last turn has its own)."""
        p = self.params(state)
        last = is_last_turn(state) or (p.final_round_result and state.final_round)
        if p.last_turn_scale > 0 and last:
            return LastTurn(p.last_turn_scale)
        if self.worth_model is not None:
            return self.worth_model
        model: WorthModel = FocusedPotential(p.potential, p.focus)
        table = shipped(state.players) if p.calibration else None
        if table is not None:
            model = Calibrated(model, table, p.calibration)
        return model

    def worths(self, state: State) -> Worths:
        """The turn's worths (computed once per turn and kept)."""
        self.planner(state)
        assert self._worths is not None
        return self._worths

    def planner(self, state: State) -> TurnPlanner:
        """The turn's planner, built once per turn (the board does not change while rolling) and
        again when a chip is spent beyond ``Params.max_spend``: the planner sees only the chips it
        may spend (``table[c]`` is the table with ``c`` + the others held)."""
        me = state.seat
        chips = state.chips[me]
        extra = max(0, chips - self.params(state).max_spend)
        key = (state.turn, me, state.towel, state.secured, state.figure, state.chips[me] + state.pool, extra)
        if key != self._plan_key or self._planner is None or len(self._planner.table) <= chips - extra:
            p = self.params(state)
            model = self.model(state)
            worths = model.worths(state)
            self._worths = worths
            utility = None
            if p.risk > 0 and not isinstance(model, LastTurn):
                utility = RiskAttitude.of(state, p.potential, p.risk).utility
            self._planner = TurnPlanner(worths.table(chips)[extra:], worths.chip_value[extra:], utility)
            self._plan_key = key
        return self._planner

    def roll_values(self, state: State) -> list[tuple[float, Action]]:
        """Every legal rolling choice with its expectimax value, in the engine's order."""
        chips = state.chips[state.seat]
        spend = min(chips, self.params(state).max_spend)
        return self.planner(state).decide(state.kept, state.last, spend)

    def action_values(self, state: State) -> dict[Action, float]:
        """Every legal action of the action phase with its worth."""
        chips = state.chips[state.seat]
        w = self.worths(state)
        return {a: w.action_worth(a, chips) for a in legal_actions(state)}

    def setup_values(self, state: State) -> dict[Action, float]:
        """The placement preference of every legal placement (higher first)."""
        p = self.params(state)
        w = p.setup
        mine = [0] * N_COLOURS
        theirs = [0] * N_COLOURS
        mine_at = [0] * 6
        for i in REGULAR:
            owner = state.towel[i]
            if owner == state.seat:
                mine[LOUNGER_COLOUR[i]] += 1
                mine_at[LOUNGER_VALUE[i]] += 1
            elif owner >= 0:
                theirs[LOUNGER_COLOUR[i]] += 1

        def value(a: Action) -> float:
            i = a.lounger
            c, v = LOUNGER_COLOUR[i], LOUNGER_VALUE[i]
            wide = p.wide if c in WIDE else 0.0
            pref = p.setup_class[c * 3 + v - 2] if p.setup_class else w[v]
            return pref - p.spread * mine[c] + wide + p.rival * theirs[c] - p.rows * mine_at[v] - i / 100.0

        legal = legal_actions(state)
        out = {a: value(a) for a in legal}
        if p.setup_net:
            from .value import load_default

            nets = load_default().values_after([apply(state, a) for a in legal], state.seat)
            for a, x in zip(legal, nets, strict=True):
                out[a] += p.setup_net * float(x)
        return out

    def choose(self, state: State) -> Action:
        """The search's choice among ``legal_actions(state)``."""
        legal = legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        if state.phase == Phase.SETUP:
            values = self.setup_values(state)
            return max(legal, key=lambda a: values[a])
        if state.phase == Phase.ROLL:
            options = self.roll_values(state)
            top = options[0]
            for o in options[1:]:
                if o[0] > top[0] + 1e-9:
                    top = o
            return top[1]
        values = self.action_values(state)
        return max(legal, key=lambda a: values[a])


def five_free(state: State) -> bool:
    """True when a five-lounger has no towel (R23)."""
    return any(state.towel[i] < 0 for i in FIVES)


__all__ = [
    "N_COLOURS",
    "LastTurn",
    "Params",
    "SearchPolicy",
    "ValueWorths",
    "WorthModel",
    "invade_gain",
    "load_worth_model",
]
