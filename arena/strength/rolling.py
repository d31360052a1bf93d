"""A turn's rolling (R10-R15): the exact expectimax of the search and the one-ply of the greedy.

The state of a turn's rolling is (dice set aside, last throw, chips left); the board and the
lifeguard's start position do not change until the turn's action.  A rolling result is worth its
**leaf** value: the best lounger action it reaches (:meth:`Worths.table`, never below PASS = 0)
plus the value of the chips still held.

* :class:`TurnPlanner` searches the whole rest of the turn exactly.  A **chance node** (the moment
  before a throw of ``k`` dice) is worth the probability-weighted sum, over every outcome of the
  throw (the exact multinomial, at most 462 outcomes), of the best decision after it: STOP (the
  leaf), CHIP (the chance node with the same dice aside and one chip fewer, every die of the last
  throw thrown again: R12, R14) or any legal KEEP (the chance node with those dice and the throw's
  lifeguards set aside: R11, R13).  Chance nodes are memoised by (dice aside, chips left) for the
  whole turn.  No clock is read: the tree is small (the worst case, a fresh turn with four chips,
  is 462 x 5 chance nodes), so the values are exact and a rerun repeats them.
* :func:`one_ply` values each choice after a throw by looking one throw ahead only: STOP is the
  leaf; a KEEP (or a CHIP) is the expectation, over the exact distribution of the re-throw, of the
  leaf that the new result would give if the player then stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena.engine import Action
from arena.engine.actions import CHIP, KEEP, STOP
from arena.engine.board import LIFEGUARD, N_COLOURS

from .dice import CHIPS_SHIFT, LG_SHIFT, dice_code, keeps_of, throw_outcomes
from .worth import Table, Worths


class Leaves:
    """Leaf values: ``leaf(code, chips)`` = best action worth the result ``code`` reaches with
    ``chips`` held, plus ``chip_value[chips]`` (memoised); with a ``utility``, that function of
    it (a risk attitude: the planners then maximise the expected utility, not the expected worth;
    it must be non-decreasing, so every leaf still takes its best action)."""

    def __init__(
        self, table: Table, chip_value: Sequence[float], utility: Callable[[float], float] | None = None
    ) -> None:
        self.table = table
        self.chip_value = chip_value
        self.utility = utility
        self._memo: dict[int, float] = {}

    @classmethod
    def of(cls, worths: Worths, chips_max: int) -> Leaves:
        """The leaves of ``worths`` for 0..``chips_max`` chips held."""
        return cls(worths.table(chips_max), worths.chip_value)

    def leaf(self, code: int, chips: int) -> float:
        """The value of stopping with the result ``code`` and ``chips`` chips left."""
        key = code | chips << CHIPS_SHIFT
        v = self._memo.get(key)
        if v is None:
            row = self.table[chips][code >> LG_SHIFT & 7]
            best = 0.0
            for c in range(N_COLOURS):
                x = row[c][code >> (3 * c) & 7]
                if x > best:
                    best = x
            v = best + self.chip_value[chips]
            if self.utility is not None:
                v = self.utility(v)
            self._memo[key] = v
        return v


class TurnPlanner(Leaves):
    """Exact expectimax over one turn's rolling decisions (module docstring), memoised."""

    def __init__(
        self, table: Table, chip_value: Sequence[float], utility: Callable[[float], float] | None = None
    ) -> None:
        super().__init__(table, chip_value, utility)
        self._chance: dict[int, float] = {}

    @property
    def nodes(self) -> int:
        """Chance nodes evaluated so far."""
        return len(self._chance)

    def chance(self, kept: int, k: int, chips: int) -> float:
        """Expected value of throwing ``k`` dice with ``kept`` set aside and ``chips`` chips."""
        memo = self._chance
        ckey = chips << CHIPS_SHIFT
        v = memo.get(kept | ckey)
        if v is not None:
            return v
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
        """Every legal rolling choice after the throw ``last`` with its expectimax value, in the
        engine's order of legal actions (STOP, CHIP, then the KEEPs)."""
        kc = dice_code(kept)
        out = [(self.leaf(kc + dice_code(last), chips), STOP)]
        if chips > 0:
            out.append((self.chance(kc, sum(last), chips - 1), CHIP))
        base = kc + (last[LIFEGUARD] << LG_SHIFT)
        for s, left in keeps_of(tuple(last[:N_COLOURS])):
            out.append((self.chance(base + dice_code(s), left, chips), KEEP[s]))
        return out


def one_ply(
    leaves: Leaves, kept: Sequence[int], last: Sequence[int], chips: int
) -> list[tuple[float, Action]]:
    """Every legal rolling choice after the throw ``last`` valued one throw ahead (module
    docstring), in the engine's order (STOP, CHIP with a chip, then the KEEPs)."""
    leaf = leaves.leaf
    kc = dice_code(kept)
    out = [(leaf(kc + dice_code(last), chips), STOP)]
    if chips > 0:
        n = sum(last)
        out.append((sum(p * leaf(kc + code, chips - 1) for code, _, p, _ in throw_outcomes(n)), CHIP))
    base = kc + (last[LIFEGUARD] << LG_SHIFT)
    for s, left in keeps_of(tuple(last[:N_COLOURS])):
        aside = base + dice_code(s)
        out.append((sum(p * leaf(aside + code, chips) for code, _, p, _ in throw_outcomes(left)), KEEP[s]))
    return out
