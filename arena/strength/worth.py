"""What a lounger action is worth to the seat to act, and the leaf table of the rolling planners.

A turn ends with one lounger action (R19-R23) or a pass; while rolling, the dice decide only
*which* actions will be in reach.  So both players of this package first value every lounger
action the seat to act could take this turn (a :class:`Worths`), then look up, for every
possible rolling result, the best action it reaches (:func:`leaf_table`).

Worths are in **points of margin**: the change the action makes to *my points minus the mean
points of the other players* (what the pairwise share of R28 rewards: a point I gain counts
against every opponent, a point I take from one opponent counts against that one only, so it
is worth ``1 / (players - 1)``).  PASS is worth 0.

Two models:

* :func:`points_now` -- the points the action scores at once (R27): FLIP ``v`` (R19), RECLAIM
  ``v`` plus the intruder's lost figure point (R20), INVADE the figure's point plus the points
  of the chips it brings (R21, one point per 2 chips), CONQUER ``v`` minus the figure's point
  that leaves (R22), TAKE_FIVE 5 (R23).  Chips held are worth ``chips // 2`` (R27).  The greedy
  plays this.
* :class:`Potential` -- points with the future folded in (the search): an own plain towel is
  already worth ``lam[v] * v`` (it is likely to be flipped later anyway, so flipping it now
  gains only the rest), a plain towel carrying a figure is a race between RECLAIM and CONQUER
  worth ``rho[v] * v`` to either side, a chip is worth ``chip`` points (half a point at the end
  plus the re-throws it buys).  The potentials fade to 0 as the end nears (R25), so the last
  turns score outright.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.engine import Action, ActionKind, State, scores
from arena.engine.board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    CHIPS_PER_INVASION,
    FIVE_VALUE,
    FIVES,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    N_DICE,
    N_LOUNGERS,
    REGULAR,
    advance,
)

# table[chips][lifeguards in the result][colour][n dice of that colour] -> best action worth
Table = list[list[list[list[float]]]]
ByValue = tuple[float, float, float, float, float, float]  # indexed by lounger value 0..5


def invade_gain(chips: int, pool: int) -> int:
    """Chips an INVADE brings to a player holding ``chips`` with ``pool`` chips left (R21)."""
    return max(0, min(CHIPS_PER_INVASION, CHIPS_MAX_HELD - chips, pool))


@dataclass(frozen=True)
class Worths:
    """The lounger actions open to the seat to act this turn, each with its worth.

    ``acts[i]`` is ``(worth, is_invade)`` for the one action the actor could take on lounger
    ``i`` if the dice reach it, or None (nothing to do there: secured, a third player's figure,
    no figure or towel in supply; R24).  ``five`` is TAKE_FIVE's worth when a five-lounger is free
    and the actor has a towel (R23), else None.  ``chip_value[c]`` is what holding ``c`` chips is
    worth; an INVADE additionally gains ``chip_value[c + gain] - chip_value[c]`` where ``gain`` =
    :func:`invade_gain` (``c`` chips held when acting, ``pool_total`` = held + pool at the turn's
    start, constant while rolling).
    """

    guard: int  # the lifeguard's position before this turn's result moves him (R15)
    acts: tuple[tuple[float, bool] | None, ...]
    five: float | None
    chip_value: tuple[float, ...]
    pool_total: int
    extra: dict[str, float] = field(default_factory=dict)

    def invade_bonus(self, chips: int) -> float:
        """What the chips an INVADE brings are worth when ``chips`` are held."""
        gain = invade_gain(chips, self.pool_total - chips)
        return self.chip_value[chips + gain] - self.chip_value[chips]

    def action_worth(self, action: Action, chips: int) -> float:
        """The worth of a lounger action (PASS = 0) with ``chips`` held when acting."""
        kind = action.kind
        if kind == ActionKind.PASS:
            return 0.0
        if kind == ActionKind.TAKE_FIVE:
            return self.five if self.five is not None else 0.0
        a = self.acts[action.lounger]
        if a is None:
            return 0.0
        return a[0] + (self.invade_bonus(chips) if a[1] else 0.0)

    def table(self, chips_max: int) -> Table:
        """``table[chips][lifeguards][colour][n]``: the best worth (never below PASS = 0) that a
        result with ``n`` dice of ``colour`` and ``lifeguards`` lifeguard faces reaches (R15-R18),
        for ``chips`` = 0..chips_max held.  The chip value itself is not included."""
        out: Table = []
        for chips in range(chips_max + 1):
            bonus = self.invade_bonus(chips)
            by_lifeguards = []
            for lifeguards in range(N_DICE + 1):
                blocked = BLOCKED[advance(self.guard, lifeguards) + 1]
                rows = []
                for c in range(N_COLOURS):
                    best_at = [0.0] * 8  # best needing exactly n dice, then at most n
                    for i in REGULAR:
                        a = self.acts[i]
                        if a is None or LOUNGER_COLOUR[i] != c or i in blocked:
                            continue
                        val = a[0] + (bonus if a[1] else 0.0)
                        v = LOUNGER_VALUE[i]
                        if val > best_at[v]:
                            best_at[v] = val
                    if self.five is not None and self.five > best_at[FIVE_VALUE]:
                        best_at[FIVE_VALUE] = self.five  # R18: five dice of one colour
                    for n in range(1, 8):
                        best_at[n] = max(best_at[n], best_at[n - 1])
                    rows.append(best_at)
                by_lifeguards.append(rows)
            out.append(by_lifeguards)
        return out


def _others_weight(state: State) -> float:
    return 1.0 / (state.players - 1)


def points_now(state: State) -> Worths:
    """The greedy's worths: the points each action scores at once, in margin (module docstring).

    ``state`` is any state of the seat's turn (rolling or action phase, or the throw before)."""
    me = state.seat
    w = _others_weight(state)
    towel, secured, figure = state.towel, state.secured, state.figure
    has_figure = state.figures[me] > 0
    has_towel = state.towels[me] > 0
    acts: list[tuple[float, bool] | None] = [None] * N_LOUNGERS
    for i in REGULAR:
        if secured[i]:
            continue
        v = LOUNGER_VALUE[i]
        owner, fig = towel[i], figure[i]
        if owner == me:
            acts[i] = (float(v), False) if fig < 0 else (v + w, False)  # R19 FLIP / R20 RECLAIM
        elif fig < 0:
            if has_figure:
                acts[i] = (1.0, True)  # R21 INVADE: the figure's point (+ chips, below)
        elif fig == me and has_towel:
            acts[i] = (v - 1.0, False)  # R22 CONQUER: v, less the figure's point
    five_free = has_towel and any(towel[i] < 0 for i in FIVES)
    return Worths(
        guard=state.guard,
        acts=tuple(acts),
        five=float(FIVE_VALUE) if five_free else None,
        chip_value=tuple(float(c // 2) for c in range(CHIPS_MAX_HELD + 1)),
        pool_total=state.chips[me] + state.pool,
    )


@dataclass(frozen=True)
class Potential:
    """The weights of the search's future-aware worths (module docstring).

    ``lam[v]``: share of an own plain towel's value it is already worth (it will probably be
    flipped later); ``rho[v]``: share of ``v`` that the RECLAIM/CONQUER race on a towel with a
    figure is worth to either side; ``chip``: points per chip held; potentials fade linearly to 0
    over the last ``horizon`` rounds, the rounds left estimated from the occupied loungers at
    ``pace`` loungers per turn (R25).
    """

    lam: ByValue = (0.0, 0.0, 0.33, 0.27, 0.21, 0.0)
    rho: ByValue = (0.0, 0.0, 0.15, 0.12, 0.1, 0.0)
    chip: float = 0.45
    horizon: float = 4.0
    pace: float = 0.42

    def __post_init__(self) -> None:
        for name in ("lam", "rho"):
            shares = getattr(self, name)
            if not isinstance(shares, tuple) or len(shares) != 6:
                raise ValueError(f"{name} has one share per value 0 to 5 (6), got {shares!r}")
        if not self.pace > 0:  # rounds_left divides by it
            raise ValueError(f"pace is loungers occupied per turn, above 0, got {self.pace!r}")

    def rounds_left(self, state: State) -> float:
        """A rough estimate of the rounds still to play (R25: the end needs 22 occupied loungers
        under the standard rules; ``state.rules`` says how many in a variant)."""
        if state.final_round:
            return 0.0
        missing = max(0, N_LOUNGERS - state.rules.end_unoccupied - state.occupied)
        return missing / (self.pace * state.players)

    def fade(self, state: State) -> float:
        """1 far from the end, falling linearly to 0 over the last ``horizon`` rounds."""
        if self.horizon <= 0:
            return 1.0
        return min(1.0, self.rounds_left(state) / self.horizon)

    def estimates(self, state: State) -> list[float]:
        """Every seat's points with the future folded in, the same view as :meth:`worths` (R27):
        a secured towel its value, an own plain towel ``lam[v] * v``, a figure its point plus its
        side of the race (``rho``), the owner of a towel under a figure ``rho[v] * v``, chips
        their chip value (all potentials faded as in :meth:`worths`)."""
        fade = self.fade(state)
        pts = [0.0] * state.players
        towel, secured, figure = state.towel, state.secured, state.figure
        for i in range(N_LOUNGERS):
            owner = towel[i]
            if owner < 0:
                continue
            v = LOUNGER_VALUE[i]
            fig = figure[i]
            if secured[i]:
                pts[owner] += v
            elif fig < 0:
                pts[owner] += self.lam[v] * v * fade
            else:
                pts[fig] += 1 + self.rho[v] * (v - 2) * fade
                pts[owner] += self.rho[v] * v * fade
        values = self.chip_values(state)
        for seat in range(state.players):
            pts[seat] += values[state.chips[seat]]
        return pts

    def chip_values(self, state: State) -> tuple[float, ...]:
        """What holding 0..CHIPS_MAX_HELD chips is worth (the potential chip value, faded; never
        below the point per two chips of R27)."""
        chip = self.chip * self.fade(state)
        return tuple(max(c * chip, float(c // 2)) for c in range(CHIPS_MAX_HELD + 1))

    def chip_value(self, state: State, chips: int) -> float:
        """What holding ``chips`` chips is worth (:meth:`chip_values`)."""
        return self.chip_values(state)[chips]

    def worths(self, state: State) -> Worths:
        """The future-aware worths of the seat to act's lounger actions."""
        me = state.seat
        w = _others_weight(state)
        fade = self.fade(state)
        lam = [x * fade for x in self.lam]
        rho = [x * fade for x in self.rho]
        towel, secured, figure = state.towel, state.secured, state.figure
        has_figure = state.figures[me] > 0
        has_towel = state.towels[me] > 0
        acts: list[tuple[float, bool] | None] = [None] * N_LOUNGERS
        for i in REGULAR:
            if secured[i]:
                continue
            v = LOUNGER_VALUE[i]
            owner, fig = towel[i], figure[i]
            if owner == me:
                if fig < 0:  # FLIP (R19): the rest of the value the towel does not hold yet
                    acts[i] = (v - lam[v] * v, False)
                else:  # RECLAIM (R20): the race won, and the intruder loses point and race
                    acts[i] = (v - rho[v] * v + (1 + rho[v] * (v - 2)) * w, False)
            elif fig < 0:
                if has_figure:  # INVADE (R21): a point, a CONQUER chance; the owner's potential
                    acts[i] = (1 + rho[v] * (v - 2) + (lam[v] - rho[v]) * v * w, True)
            elif fig == me and has_towel:  # CONQUER (R22): value minus the figure's point
                acts[i] = (v - 1 - rho[v] * (v - 2) + rho[v] * v * w, False)
        five_free = has_towel and any(towel[i] < 0 for i in FIVES)
        chip_value = self.chip_values(state)
        return Worths(
            guard=state.guard,
            acts=tuple(acts),
            five=float(FIVE_VALUE) if five_free else None,
            chip_value=chip_value,
            pool_total=state.chips[me] + state.pool,
        )


def score_margin(state: State, seat: int) -> float:
    """The simplest state value for the search's leaf hook: ``seat``'s current margin (its points,
    R27, minus the mean of the others').  ``SEARCH_BOT_VALUE=arena.strength.worth:score_margin``
    makes the search play the points-now worths of the greedy through the hook."""
    pts = scores(state)
    return pts[seat] - (sum(pts) - pts[seat]) / (len(pts) - 1)


def worth_of(worths: Worths, legal: Sequence[Action], chips: int) -> dict[Action, float]:
    """Every legal lounger action (and PASS) with its worth."""
    return {a: worths.action_worth(a, chips) for a in legal}
