#!/usr/bin/env python3
"""The search bot: exact expectimax over the dice, a potential-based value of every lounger action.

How it decides
==============

A turn of Cool am Pool is a small stochastic game of its own: after each throw the player picks
STOP, a KEEP or a CHIP (R12), then one lounger action (R19-R23).  The bot plays each kind of
decision like this.

Lounger values (the evaluation)
-------------------------------
Every lounger action gets a value in points: the change it makes to *my value minus the mean
value of the other players*, where a player's value is the score (R27) plus a **potential** for
what is still open: a plain towel of one's own is worth ``lam[v] * v`` (it may still be flipped),
a towel carrying another player's figure is a race between RECLAIM and CONQUER worth
``rho[v] * v`` to either side, and every chip is worth ``chip`` points (half a point at the end
plus the re-throws it buys).  So FLIP is worth ``(1 - lam[v]) * v``, RECLAIM adds the intruder's
lost point, INVADE is worth the figure's point, the chips it brings and the chance to CONQUER
later, CONQUER the lounger's value minus the figure's point, TAKE_FIVE 5 (PASS is 0).  The
potentials fade to 0 as the game nears its end (R25: the rounds left are estimated from the
unoccupied loungers), so the last turns maximise the score outright.  The weights were tuned by
duplicate-dice matches against the greedy bot (``arena evaluate``).

Rolling: exact expectimax over the chance nodes
-----------------------------------------------
The state of a turn's rolling is (dice set aside, last throw, chips left); the lifeguard's
position at the start of the turn and the board do not change until the turn's action.  The bot
searches the whole rest of the turn exactly:

* a **chance node** is the moment before a throw: its value is the sum over every outcome of the
  throw (``throw_distribution_float(k)``: the exact multinomial of the k dice, counts per face,
  at most 462 outcomes) of probability times the value of the decision that follows;
* a **decision node** takes the best of STOP (the leaf), CHIP (the chance node with the same dice
  aside, all dice of the last throw thrown again and one chip fewer, R12/R14) and every legal KEEP
  (the chance node with those dice and the throw's lifeguards set aside, R11);
* a **leaf** (STOP) is worth the best lounger action the result reaches: the lifeguard steps once
  per lifeguard face (R15), blocks his row or colour, and the result reaches a lounger of colour c
  and value v with ``n[c] >= v`` (R16-R18).  Because one action uses one colour, the leaf is the
  best over colours of a precomputed table ``table[chips][lifeguards][colour][n]`` plus the value
  of the chips left.

Dice multisets are packed into one int (3 bits per face) so that "set these dice aside" is an
addition; chance nodes are **memoised** by (dice set aside, chips left) -- the number of dice to
throw follows from them -- and the memo lives for the whole turn, so later decisions of the turn
are mostly look-ups.  Only the nodes reachable from the actual throws are expanded: a decision
takes about 6-8 ms on average in real matches (p99 about 40 ms; the worst case, a fresh turn with
four chips, expands the whole tree of 462 x 5 chance nodes in about 40 ms on one core).  No
pruning is needed at that speed, so the rolling values are the exact expectations of the leaf
values.  The search checks
its deadline; if it runs out of time it answers with the greedy rule, and the nodes it finished
stay memoised for the next decision of the turn.

Setup placements
----------------
A fixed preference by lounger value, chosen by duplicate-dice experiments against the greedy bot:
with 2 players the 2s first, then the 3s, then the 4s (easy loungers are flipped before the
opponent can invade them, while the opponent's hard 4s stay plain and open to invasion and
conquest); with 3-4 players the 3s first, then the 4s, then the 2s (with three opponents a 2 is
invaded too easily).  Within a value the leftmost free lounger comes first.

Lounger action
--------------
The legal action with the best value (above).  ``Params.rollouts`` > 0 adds Monte-Carlo
rollouts: the best ``rollout_top`` candidates are played out to the end of the game with the
greedy policy for every seat, every candidate with the same dice (common random numbers), and
the mean final margin (relative to the candidates' average) is added to each candidate's value.
Measured against the greedy bot with 0.1 s of rollouts per decision this made no difference
(+0.01 +- 0.52 points per game, 60 four-player duplicate groups), so it is off by default: within
a fraction of a second, a few dozen greedy rollouts are much noisier than the evaluation.

Time
----
The bot aims at ``min(target, 0.8 * time_left())`` per decision, ``target`` = 0.15 s (environment
variable ``SEARCH_BOT_TARGET`` to change it); it never touches the bank on purpose.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import product

from arena.engine import (
    Action,
    ActionKind,
    DiceStream,
    GreedyPolicy,
    Phase,
    State,
    apply,
    apply_throw,
    legal_actions,
    scores,
    throw_distribution_float,
)
from arena.engine.actions import CHIP, KEEP, STOP
from arena.engine.board import (
    BLOCKED,
    CHIPS_MAX_HELD,
    CHIPS_PER_INVASION,
    FIVE_VALUE,
    FIVES,
    LIFEGUARD,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    N_DICE,
    N_LOUNGERS,
    REGULAR,
    advance,
)
from arena.sdk import Bot, run

# ----------------------------------------------------------------------------- dice codes
# A multiset of dice is one int: 3 bits per face (counts 0..6), face f at bits 3f..3f+2, so adding
# two codes adds the multisets.  The lifeguard (face 5) sits at bits 15..17.  Memo keys put the
# chips left above bit 18.
_LG = 3 * LIFEGUARD
_CHIPS = 18


def dice_code(counts: Sequence[int]) -> int:
    """The int code of per-face counts."""
    return sum(c << (3 * f) for f, c in enumerate(counts))


# (code of the throw, code of its lifeguards, probability, keeps: (code of the kept colour dice,
# dice left to throw) for every legal KEEP)
Outcome = tuple[int, int, float, tuple[tuple[int, int], ...]]


@cache
def throw_outcomes(k: int) -> tuple[Outcome, ...]:
    """Every outcome of a throw of ``k`` dice with its probability and its legal KEEPs (R12)."""
    out = []
    for counts, p in throw_distribution_float(k):
        colours = counts[:N_COLOURS]
        n_colour = sum(colours)
        keeps = tuple(
            (dice_code(s), k - counts[LIFEGUARD] - sum(s))
            for s in product(*(range(n + 1) for n in colours))
            if 0 < sum(s) < n_colour
        )
        out.append((dice_code(counts), counts[LIFEGUARD] << _LG, p, keeps))
    return tuple(out)


class OutOfTime(Exception):
    """The planner's deadline passed."""


Table = list[list[list[list[float]]]]


class TurnPlanner:
    """Exact expectimax over one turn's rolling decisions (R10-R15), memoised for the turn.

    ``table[chips][lifeguards][colour][n]`` is the value of the best lounger action reachable with
    ``n`` dice of ``colour`` when the result holds ``lifeguards`` lifeguard faces (which fixes
    where the lifeguard ends, R15) and ``chips`` chips are left.  A result is worth the best over
    colours (one action per turn), never less than PASS (0), plus ``chip_value[chips]``.
    """

    def __init__(self, table: Table, chip_value: Sequence[float]) -> None:
        self.table = table
        self.chip_value = chip_value
        self.deadline = float("inf")  # time.perf_counter() (wall clock)
        self.cpu_deadline = float("inf")  # time.process_time() (this process's CPU time)
        self._leaf: dict[int, float] = {}
        self._chance: dict[int, float] = {}

    @property
    def nodes(self) -> int:
        """Chance nodes evaluated so far."""
        return len(self._chance)

    def leaf(self, code: int, chips: int) -> float:
        """The value of stopping with the result ``code`` and ``chips`` chips left."""
        key = code | chips << _CHIPS
        v = self._leaf.get(key)
        if v is None:
            row = self.table[chips][code >> _LG & 7]
            best = 0.0
            for c in range(N_COLOURS):
                x = row[c][code >> (3 * c) & 7]
                if x > best:
                    best = x
            v = best + self.chip_value[chips]
            self._leaf[key] = v
        return v

    def chance(self, kept: int, k: int, chips: int) -> float:
        """Expected value of throwing ``k`` dice with ``kept`` set aside and ``chips`` chips."""
        memo = self._chance
        ckey = chips << _CHIPS
        v = memo.get(kept | ckey)
        if v is not None:
            return v
        if time.perf_counter() > self.deadline or time.process_time() > self.cpu_deadline:
            raise OutOfTime
        chip_alt = self.chance(kept, k, chips - 1) if chips > 0 else -1e9
        leaf = self.leaf
        total = 0.0
        for code, lifeguards, p, keeps in throw_outcomes(k):
            best = leaf(kept + code, chips)
            if chip_alt > best:
                best = chip_alt
            base = kept + lifeguards
            for s, left in keeps:
                child = base + s
                x = memo.get(child | ckey)
                if x is None:
                    x = self.chance(child, left, chips)
                if x > best:
                    best = x
            total += p * best
        memo[kept | ckey] = total
        return total

    def decide(self, kept: Sequence[int], last: Sequence[int], chips: int) -> list[tuple[float, Action]]:
        """Every legal rolling choice after the throw ``last`` with its expectimax value."""
        kc = dice_code(kept)
        out = [(self.leaf(kc + dice_code(last), chips), STOP)]
        if chips > 0:
            out.append((self.chance(kc, sum(last), chips - 1), CHIP))
        colours = tuple(last[:N_COLOURS])
        n_colour = sum(colours)
        base = kc + (last[LIFEGUARD] << _LG)
        for s in product(*(range(n + 1) for n in colours)):
            n = sum(s)
            if 0 < n < n_colour:
                out.append((self.chance(base + dice_code(s), n_colour - n, chips), KEEP[s]))
        return out


# ----------------------------------------------------------------------------- evaluation

ByValue = tuple[float, float, float, float, float, float]  # indexed by lounger value 0..5


@dataclass(frozen=True)
class Params:
    """The weights of the evaluation and the setup preference (see the module docstring)."""

    lam: ByValue = (0.0, 0.0, 0.33, 0.27, 0.21, 0.0)  # potential of an own plain towel, x value
    rho: ByValue = (0.0, 0.0, 0.15, 0.12, 0.1, 0.0)  # RECLAIM/CONQUER race on a figure, x value
    chip: float = 0.45  # points per chip held
    setup: ByValue = (0.0, 0.0, 3.0, 2.0, 1.0, 0.0)  # placement preference by value
    horizon: float = 4.0  # potentials fade linearly over the last `horizon` rounds
    pace: float = 0.42  # loungers occupied per turn, to estimate the rounds left
    rollouts: float = 0.0  # seconds of Monte-Carlo rollouts for the lounger choice (0: off)
    rollout_top: int = 3  # candidates the rollouts compare

    @staticmethod
    def for_players(players: int) -> Params:
        """The tuned defaults for a table of ``players``."""
        if players == 2:
            return Params()
        return Params(setup=(0.0, 0.0, 1.0, 3.0, 2.0, 0.0))


def rounds_left(state: State, pace: float) -> float:
    """A rough estimate of the rounds still to play (R25: the end needs 22 occupied loungers under
    the standard rules; ``state.rules`` says how many in a variant)."""
    if state.final_round:
        return 0.0
    missing = max(0, N_LOUNGERS - state.rules.end_unoccupied - state.occupied)
    return missing / (pace * state.players)


class Evaluator:
    """Values of the lounger actions for the seat to act (points; PASS = 0)."""

    def __init__(self, state: State, params: Params) -> None:
        self.state = state
        self.params = params
        me = self.me = state.seat
        w = 1.0 / (state.players - 1)  # one opponent's loss, against the mean of the others
        fade = 1.0
        if params.horizon > 0:
            fade = min(1.0, rounds_left(state, params.pace) / params.horizon)
        lam = [x * fade for x in params.lam]
        rho = [x * fade for x in params.rho]
        towel, secured, figure = state.towel, state.secured, state.figure
        has_figure = state.figures[me] > 0
        has_towel = state.towels[me] > 0
        # per lounger: (value of the action the actor can take there, is it an INVADE) or None
        acts: list[tuple[float, bool] | None] = [None] * N_LOUNGERS
        for i in REGULAR:
            if secured[i]:
                continue
            v = LOUNGER_VALUE[i]
            owner, fig = towel[i], figure[i]
            if owner == me:
                if fig < 0:  # FLIP (R19)
                    acts[i] = (v - lam[v] * v, False)
                else:  # RECLAIM (R20): my lounger, and the intruder loses its point and race
                    acts[i] = (v - rho[v] * v + (1 + rho[v] * (v - 2)) * w, False)
            elif fig < 0:
                if has_figure:  # INVADE (R21): a point, a CONQUER chance; the owner's race
                    acts[i] = (1 + rho[v] * (v - 2) + (lam[v] - rho[v]) * v * w, True)
            elif fig == me and has_towel:  # CONQUER (R22): value minus the figure's point
                acts[i] = (v - 1 - rho[v] * (v - 2) + rho[v] * v * w, False)
        self.acts = acts
        five_free = has_towel and any(towel[i] < 0 for i in FIVES)
        self.five = float(FIVE_VALUE) if five_free else None  # TAKE_FIVE (R23)

    @staticmethod
    def invade_gain(chips: int, total: int) -> int:
        """Chips an INVADE brings with ``chips`` held and ``total`` = held + pool (R21)."""
        return max(0, min(CHIPS_PER_INVASION, CHIPS_MAX_HELD - chips, total - chips))

    def chip_value(self, chips: int) -> float:
        """What holding ``chips`` chips is worth."""
        return self.params.chip * chips

    def action_value(self, action: Action, chips: int, total: int) -> float:
        """The value of a lounger action with ``chips`` held and ``total`` = held + pool."""
        kind = action.kind
        if kind == ActionKind.PASS:
            return 0.0
        if kind == ActionKind.TAKE_FIVE:
            return self.five if self.five is not None else 0.0
        a = self.acts[action.lounger]
        if a is None:
            return 0.0
        if a[1]:
            return a[0] + self.params.chip * self.invade_gain(chips, total)
        return a[0]

    def table(self, chips_max: int, total: int) -> Table:
        """``table[chips][lifeguards][colour][n]`` for :class:`TurnPlanner`."""
        guard0 = self.state.guard
        out: Table = []
        for chips in range(chips_max + 1):
            invade_bonus = self.params.chip * self.invade_gain(chips, total)
            by_lifeguards = []
            for lifeguards in range(N_DICE + 1):
                blocked = BLOCKED[advance(guard0, lifeguards) + 1]
                rows = []
                for c in range(N_COLOURS):
                    best_at = [0.0] * 8  # best action needing exactly n dice, then at most n
                    for i in REGULAR:
                        a = self.acts[i]
                        if a is None or LOUNGER_COLOUR[i] != c or i in blocked:
                            continue
                        val = a[0] + (invade_bonus if a[1] else 0.0)
                        v = LOUNGER_VALUE[i]
                        if val > best_at[v]:
                            best_at[v] = val
                    if self.five is not None and self.five > best_at[FIVE_VALUE]:
                        best_at[FIVE_VALUE] = self.five
                    for n in range(1, 8):
                        best_at[n] = max(best_at[n], best_at[n - 1])
                    rows.append(best_at)
                by_lifeguards.append(rows)
            out.append(by_lifeguards)
        return out


# ----------------------------------------------------------------------------- the player


class SearchPlayer:
    """The decision maker, independent of the referee: ``choose(state, seconds)``."""

    def __init__(self, params: Params | None = None) -> None:
        self.fixed_params = params
        self.greedy = GreedyPolicy()
        self._plan_key: tuple[object, ...] | None = None
        self._planner: TurnPlanner | None = None
        self.timeouts = 0  # decisions answered by the fallback rule
        self.seed = 0  # mixed into the rollouts' dice (the SDK's bot_seed: a rerun repeats them)
        self._cpu_deadline = float("inf")

    def params(self, state: State) -> Params:
        """The weights in use for this table size."""
        return self.fixed_params or Params.for_players(state.players)

    def choose(self, state: State, budget: float = 0.15, cpu_budget: float | None = None) -> Action:
        """A legal action for the seat to act, within about ``budget`` seconds of wall-clock time
        and, if given, ``cpu_budget`` seconds of this process's CPU time."""
        legal = legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        deadline = time.perf_counter() + budget
        self._cpu_deadline = float("inf") if cpu_budget is None else time.process_time() + cpu_budget
        if state.phase == Phase.SETUP:
            return self._place(state, legal)
        if state.phase == Phase.ROLL:
            try:
                return self._roll(state, deadline)
            except OutOfTime:
                self.timeouts += 1
                return self.greedy.choose(state)
        return self._act(state, legal, deadline)

    def _place(self, state: State, legal: Sequence[Action]) -> Action:
        w = self.params(state).setup
        return max(legal, key=lambda a: (w[LOUNGER_VALUE[a.lounger]], -a.lounger))

    def planner_for(self, state: State) -> tuple[TurnPlanner, Evaluator, int]:
        """The turn's planner (built once per turn), the evaluator and held + pool chips."""
        me = state.seat
        total = state.chips[me] + state.pool  # constant during a turn's rolling
        ev = Evaluator(state, self.params(state))
        key = (state.turn, me, state.guard, state.towel, state.secured, state.figure, total)
        planner = self._planner
        if key != self._plan_key or planner is None or len(planner.table) <= state.chips[me]:
            chip_values = [ev.chip_value(c) for c in range(CHIPS_MAX_HELD + 1)]
            planner = self._planner = TurnPlanner(ev.table(state.chips[me], total), chip_values)
            self._plan_key = key
        return planner, ev, total

    def _roll(self, state: State, deadline: float) -> Action:
        planner, _, _ = self.planner_for(state)
        planner.deadline = deadline
        planner.cpu_deadline = self._cpu_deadline
        options = planner.decide(state.kept, state.last, state.chips[state.seat])
        return max(options, key=lambda o: o[0])[1]

    def _act(self, state: State, legal: Sequence[Action], deadline: float) -> Action:
        me = state.seat
        params = self.params(state)
        ev = Evaluator(state, params)
        total = state.chips[me] + state.pool
        values = {a: ev.action_value(a, state.chips[me], total) for a in legal}
        best = max(legal, key=lambda a: values[a])
        if params.rollouts <= 0:
            return best
        candidates = sorted(legal, key=lambda a: -values[a])[: params.rollout_top]
        stop = min(deadline, time.perf_counter() + params.rollouts)
        means = self.rollouts(state, candidates, stop)
        if means is None:
            return best
        return max(candidates, key=lambda a: values[a] + means[a])

    def rollouts(self, state: State, candidates: Sequence[Action], stop: float) -> dict[Action, float] | None:
        """Monte-Carlo rollouts to the end with the greedy policy for every seat; every candidate
        sees the same dice (common random numbers).  Returns each candidate's mean final margin
        (my score minus the others' mean) relative to the candidates' average, or None if there
        was no time for a single round of rollouts."""
        me = state.seat
        rng = random.Random(hash((self.seed, state.turn, me, state.towel, state.figure)))
        after = [apply(state, a) for a in candidates]
        sums = [0.0] * len(candidates)
        n = 0
        greedy = self.greedy
        while time.perf_counter() < stop:
            dice = DiceStream(rng.randrange(1 << 62))
            for k, s in enumerate(after):
                while not s.is_over:
                    if s.is_chance:
                        s = apply_throw(s, dice.throw(s.turn, s.throw_no + 1, s.dice))
                    else:
                        s = apply(s, greedy.choose(s))
                pts = scores(s)
                sums[k] += pts[me] - (sum(pts) - pts[me]) / (state.players - 1)
            n += 1
        if n == 0:
            return None
        mean = sum(sums) / (n * len(candidates))
        return {a: sums[k] / n - mean for k, a in enumerate(candidates)}


class SearchBot(Bot):
    """The SDK bot around :class:`SearchPlayer`."""

    name = "search"
    version = "1"

    def __init__(self) -> None:
        super().__init__()
        self.player = SearchPlayer()
        self.target = float(os.environ.get("SEARCH_BOT_TARGET", "0.15"))
        for k in range(1, N_DICE + 1):  # build the outcome tables before the first deadline
            throw_outcomes(k)

    def setup(self, welcome: object) -> None:
        """Per match: the rollouts draw from the match's bot seed."""
        self.player.seed = self.bot_seed

    def choose(self, state: State, legal: Sequence[Action]) -> Action:
        """The player's choice within ``target`` seconds of CPU time, and of wall-clock time 0.8 x
        the move time left plus a quarter of the bank.

        The search's own limit is CPU time, which a loaded machine does not shrink: the search
        (at most about 40 ms of CPU) then always finishes and a rerun of a match repeats every
        choice.  The wall-clock limit only guards against a forfeit; it spends at most a quarter
        of the bank left on one decision, so the bank is never exhausted.
        """
        budget = self.target
        if self.decision is not None:
            d = self.decision
            budget = 0.8 * d.time_left() + (0.0 if d.unlimited else 0.25 * d.bank)
        wall, cpu = time.perf_counter(), time.process_time()
        action = self.player.choose(state, max(0.0, budget), cpu_budget=self.target)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if wall > self.target:  # a diagnostic for the bot's log: was it the search or the machine?
            print(
                f"search: slow decision: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU, "
                f"budget {budget * 1000:.0f} ms, turn {state.turn}, {state.phase.label}",
                file=sys.stderr,
                flush=True,
            )
        return action


if __name__ == "__main__":
    run(SearchBot())
