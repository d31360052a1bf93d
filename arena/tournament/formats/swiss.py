"""Swiss: a fixed number of rounds; each round, entries of equal standing meet.

- **Unit**: a table is played as ``games`` duplicate-dice groups (each: one seed under every seat
  rotation), and a group is worth at most 1 point (:mod:`.scoring`).
- **Standings**: points so far (byes included), ties in a fixed order drawn from the tournament
  seed (so round 1 is a seeded random draw).  The reported standing breaks ties by Buchholz
  (:meth:`Swiss.buchholz`), and entries equal in both share the place.
- **Byes**: when the field does not divide into tables (``entries % table size`` entries left
  over), the lowest-standing entries among those with the fewest byes sit out, each recorded as
  a bye worth :data:`BYE_POINTS` per duplicate group of a table (``games`` of them): the mean
  score of a table, neither a reward nor a penalty.  An odd field at two-player tables (with
  no more rounds than bots) pairs its bye as a table against a :data:`PHANTOM` entry below
  everyone, so the look-ahead below keeps byes and pairings new together.
- **Pairing**: tables are filled from the top of the standings, with as few repeat pairings
  (two entries that already shared a table) as a bounded search can find: none where avoidable
  for small fields; beyond the search budget, a greedy table-by-table fill.  At two-player
  tables with no more rounds than a round robin has (bots - 1, or bots when odd), a round is also
  paired so that the rounds still to come can all be new (a look-ahead within the same budget).
- **Rounds**: ``rounds`` (default ``ceil(log2(entries))``); a round is handed out when every
  match of the previous one is done.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations

from arena.tournament.pairing import derive_seed, rotations

from .base import Bye, Finished, Format, FormatError, History, Next, Pairing, Play, Settings, Wait
from .scoring import group_points

BYE_POINTS = 0.5
"""A bye's points per duplicate group of a table: the mean score of a group (its points add up to
half the seats at every table size), so a bye is worth ``games * BYE_POINTS``."""
SEARCH_BUDGET = 20_000  # tables tried by the exact search before the greedy fill takes over
PHANTOM = -1
"""The entry an odd two-player field's bye is paired with (no real entry has a negative number)."""


class _OutOfBudget(Exception):
    pass


def default_rounds(entries: int) -> int:
    """``ceil(log2(entries))``, at least 1."""
    return max(1, math.ceil(math.log2(max(entries, 2))))


def repeats(table: Sequence[int], met: set[frozenset[int]]) -> int:
    """How many pairs at ``table`` already met."""
    return sum(1 for a, b in combinations(table, 2) if frozenset((a, b)) in met)


def _greedy(order: list[int], k: int, met: set[frozenset[int]]) -> list[tuple[int, ...]]:
    """Table by table from the top: the best-standing free entry and the ``k - 1`` others with
    the fewest repeats (then the nearest in the standings)."""
    rest = list(order)
    tables: list[tuple[int, ...]] = []
    while rest:
        first, others = rest[0], rest[1:]
        best: tuple[int, ...] | None = None
        best_rep = -1
        for combo in combinations(others, k - 1):
            r = repeats((first, *combo), met)
            if best is None or r < best_rep:
                best, best_rep = combo, r
                if r == 0:
                    break
        assert best is not None
        tables.append((first, *best))
        rest = [e for e in others if e not in best]
    return tables


def _solutions(
    order: list[int], k: int, met: set[frozenset[int]], allowed: int, budget: list[int]
) -> Iterator[list[tuple[int, ...]]]:
    """Every split of ``order`` into tables of ``k`` with at most ``allowed`` repeat pairings, from
    the top of ``order``, lazily; each table tried costs one step of ``budget``."""
    if not order:
        yield []
        return
    first, others = order[0], order[1:]
    for combo in combinations(others, k - 1):
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfBudget
        table = (first, *combo)
        r = repeats(table, met)
        if r > allowed:
            continue
        for rest in _solutions([e for e in others if e not in combo], k, met, allowed - r, budget):
            yield [table, *rest]


def _search(
    order: list[int], k: int, met: set[frozenset[int]], allowed: int, budget: list[int]
) -> list[tuple[int, ...]] | None:
    """The first split with at most ``allowed`` repeats (:func:`_solutions`), or None."""
    return next(_solutions(order, k, met, allowed, budget), None)


def _fresh_rounds(entries: list[int], met: set[frozenset[int]], rounds: int, budget: list[int]) -> bool:
    """Whether ``rounds`` more two-player rounds of ``entries`` can pair only bots that have not
    met (a search; past ``budget`` steps it answers True: not known to be impossible)."""
    if rounds == 0:
        return True
    try:
        return any(
            _fresh_rounds(entries, met | {frozenset(t) for t in split}, rounds - 1, budget)
            for split in _solutions(entries, 2, met, 0, budget)
        )
    except _OutOfBudget:
        return True


def pair_tables(
    order: Sequence[int],
    k: int,
    met: set[frozenset[int]],
    *,
    budget: int = SEARCH_BUDGET,
    fresh_after: int = 0,
) -> list[tuple[int, ...]]:
    """Split ``order`` (entries best first; its length a multiple of ``k``) into tables of ``k``
    with the fewest repeat pairings found: the exact minimum unless the search runs past
    ``budget`` tables tried, then the greedy fill.  Among equally few repeats, tables are filled
    from the top of ``order`` (entries of equal standing meet).

    ``fresh_after`` (two-player tables): rounds still to come that can all be new; the first
    repeat-free split (from the top) after which they still can be is taken, so a long Swiss
    does not pair itself into a corner (6 bots: three rounds that leave two triangles of bots
    not yet met force a repeat in round 4 of 5)."""
    order = list(order)
    if len(order) % k:
        raise ValueError(f"{len(order)} entries do not fill tables of {k}")
    if k == 2 and fresh_after > 0:
        left = [budget]  # shared: the look-ahead costs at most ``budget`` steps in all
        try:
            for split in _solutions(order, k, met, 0, left):
                after = met | {frozenset(t) for t in split}
                if _fresh_rounds(sorted(order), after, fresh_after, left):
                    return split
        except _OutOfBudget:
            pass
    greedy = _greedy(order, k, met)
    bound = sum(repeats(t, met) for t in greedy)
    left = [budget]
    try:
        for allowed in range(bound):
            found = _search(order, k, met, allowed, left)
            if found is not None:
                return found
    except _OutOfBudget:
        pass
    return greedy


def choose_byes(order: Sequence[int], count: int, byes: Counter[int]) -> list[int]:
    """``count`` entries to sit out: the fewest byes so far first, then the lowest standing."""
    ranked = sorted(range(len(order)), key=lambda i: (byes[order[i]], -i))
    return [order[i] for i in ranked[:count]]


class Swiss(Format):
    """Swiss rounds for tables of 2, 3 or 4 (see the module docstring)."""

    name = "swiss"

    @classmethod
    def check(cls, settings: Settings) -> None:
        super().check(settings)
        if len(settings.table_sizes) != 1 or not 2 <= settings.table_sizes[0] <= 4:
            raise FormatError(
                f"a Swiss tournament plays one table size of 2, 3 or 4, got {list(settings.table_sizes)}"
            )
        k = settings.table_sizes[0]
        if settings.entries < k:
            raise FormatError(
                f"a Swiss tournament with tables of {k} needs at least {k} bots, got {settings.entries}"
            )
        if settings.rounds is not None and settings.rounds < 1:
            raise FormatError(f"--rounds must be at least 1, got {settings.rounds}")

    @property
    def rounds(self) -> int:
        return self.settings.rounds or default_rounds(self.settings.entries)

    def planned(self) -> int | None:
        k = self.settings.table_sizes[0]
        return self.rounds * (self.settings.entries // k) * self.settings.games * k

    def tie_order(self) -> list[int]:
        """The fixed order that breaks ties in the standings (drawn from the tournament seed)."""
        order = list(range(self.settings.entries))
        random.Random(derive_seed(self.settings.seed, 0x5315)).shuffle(order)
        return order

    def standings(self, history: History) -> list[int]:
        """Entries best first as the pairing sees them: points (byes included), then the seeded
        tie order (the report's final standing breaks ties by Buchholz first: :meth:`report`)."""
        points = self.points(history)
        tie = {e: i for i, e in enumerate(self.tie_order())}
        return sorted(range(self.settings.entries), key=lambda e: (-round(points[e], 9), tie[e]))

    def points(self, history: History) -> dict[int, float]:
        """Every entry's Swiss points so far: its groups' points plus its byes."""
        points, _ = group_points(history.matches)
        for b in history.byes:
            points[b.entry] = points.get(b.entry, 0.0) + b.points
        return {e: points.get(e, 0.0) for e in range(self.settings.entries)}

    def buchholz(self, history: History) -> dict[int, float]:
        """The tie-break of the final standing: for every round an entry played, the mean points of
        the opponents at its table (their points now); for a round it sat out (a bye), its own
        points (the "virtual opponent" of chess's Swiss rules, so a bye neither helps nor hurts).
        At two-player tables this is chess's Buchholz: the sum of the opponents' points.

        A round counts as played once one of the entry's matches in it is done (finished or
        failed): a round handed out but not yet played adds nothing, so the standing of a
        tournament in progress is not moved by the opponents it has yet to meet."""
        points = self.points(history)
        tables: dict[tuple[int, int], tuple[int, ...]] = {}
        for m in history.matches:
            if not m.done:
                continue
            for e in m.seating:
                tables[(e, m.round)] = m.seating
        total = {e: 0.0 for e in range(self.settings.entries)}
        for (e, _), seating in tables.items():
            others = [o for o in seating if o != e]
            total[e] += sum(points[o] for o in others) / len(others)
        for b in history.byes:
            total[b.entry] += points[b.entry]
        return total

    @staticmethod
    def _key(points: dict[int, float], bh: dict[int, float]) -> dict[int, tuple[float, float]]:
        return {e: (round(points[e], 9), round(bh[e], 9)) for e in points}

    def _ranked(self, history: History, key: dict[int, tuple[float, float]]) -> list[int]:
        return sorted(self.standings(history), key=lambda e: (-key[e][0], -key[e][1]))  # stable

    def ranking(self, history: History) -> list[int] | None:
        """The standing's order (:meth:`report`): points, then Buchholz, then the seeded order."""
        return self._ranked(history, self._key(self.points(history), self.buchholz(history)))

    def report(self, history: History, names: Sequence[str]) -> list[str]:
        """The Swiss standing: a heading that says which round it stands at (after the last round
        handed out, or in it while it is still in play: its finished matches count), then one
        line per entry, best first, by points (byes included), then Buchholz (:meth:`buchholz`);
        entries equal in both share a place (standard competition ranking: 1, 2, 2, 4)."""
        points = self.points(history)
        bh = self.buchholz(history)
        key = self._key(points, bh)
        ranked = self._ranked(history, key)
        handed = max([0, *(m.round for m in history.matches), *(b.round for b in history.byes)])
        if any(not m.done for m in history.matches):
            when = f"in round {handed} of {self.rounds} (still in play; its finished matches count)"
        else:
            when = f"after round {handed} of {self.rounds}"
        lines = [f"Swiss standing {when}: points, then Buchholz"]
        place = 0
        for i, e in enumerate(ranked):
            if i == 0 or key[e] != key[ranked[i - 1]]:
                place = i + 1
            lines.append(f"{place}. {names[e]} {_shown(points[e])} (Buchholz {_shown(bh[e])})")
        return lines

    def next(self, history: History) -> Next:
        played = max((m.round for m in history.matches), default=0)
        played = max([played, *(b.round for b in history.byes)])
        if any(not m.done for m in history.matches):
            return Wait()
        if played >= self.rounds:
            return Finished()
        return self.pair_round(played + 1, history)

    def pair_round(self, rnd: int, history: History) -> Play:
        """Round ``rnd``'s tables (given every earlier round's results) and byes."""
        s = self.settings
        k = s.table_sizes[0]
        order = self.standings(history)
        bye_count = Counter(b.entry for b in history.byes)
        met = _met(m.seating for m in history.matches)
        if k == 2 and s.entries % 2 and self.rounds <= s.entries:
            # An odd two-player field: the bye is a table against a phantom entry below everyone,
            # met by whoever already sat out, so the look-ahead keeps the rounds still to come new,
            # their byes included (a round robin's worth of rounds: every bot sits out once).
            tables = pair_tables(
                [*order, PHANTOM], 2, met | {frozenset((PHANTOM, e)) for e in bye_count},
                fresh_after=self.rounds - rnd,
            )  # fmt: skip
            sitting = [e for t in tables if PHANTOM in t for e in t if e != PHANTOM]
            tables = [t for t in tables if PHANTOM not in t]
        else:
            sitting = choose_byes(order, s.entries % k, bye_count)
            # two-player tables of an even field: keep the rounds still to come new while they can be
            fresh_after = self.rounds - rnd if k == 2 and not sitting and self.rounds < s.entries else 0
            tables = pair_tables([e for e in order if e not in sitting], k, met, fresh_after=fresh_after)
        pairings = []
        for game in range(s.games):
            for t, table in enumerate(tables):
                seed = derive_seed(s.seed, rnd, t, game)
                for seating in rotations(table):
                    pairings.append(Pairing(seed, f"s{rnd}t{t}g{game}", seating, rnd))
        byes = tuple(Bye(rnd, e, BYE_POINTS * s.games) for e in sorted(sitting))
        return Play(tuple(pairings), byes)


def _met(seatings: Iterable[tuple[int, ...]]) -> set[frozenset[int]]:
    return {frozenset((a, b)) for seating in seatings for a, b in combinations(seating, 2)}


def _shown(x: float) -> str:
    """A number of points as the standing shows it: at most two decimals, no trailing zeros
    (``3``, ``1.5``, ``2.08``; ``:g`` gave ``2.08333``)."""
    return f"{x:.2f}".rstrip("0").rstrip(".") or "0"
