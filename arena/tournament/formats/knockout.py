"""Knockout: single elimination, two-player tables, one bracket seeded in advance.

- **Seeding**: ``options["order"]``: the entries best first (by rating or registration order,
  fixed when the tournament is created); seed 1 is ``order[0]``.
- **Bracket**: the standard one for the next power of two ``P`` at or above the field (seed 1
  meets seed ``P``, 2 meets ``P - 1``, ...; seeds 1 and 2 can meet only in the final); the
  missing seeds are byes, so the best seeds go through round 1 without playing (recorded as
  byes worth 0 points).
- **A pairing** is ``games`` duplicate-dice groups (one seed, both seat rotations each).  The
  winner has more points (:mod:`.scoring`: 1 per group won outright); **ties** go to the higher
  total in-game score over the pairing's matches, then to the better seed.
- A round is handed out when every match of the previous one is done; the final's winner ends it.
- **Places**: the champion 1, the finalist 2, then the entries out in the same round share the
  places below (the semi-finals' losers 3-4, ...): :meth:`Knockout.places`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arena.tournament.pairing import derive_seed, rotations

from .base import Bye, Finished, Format, FormatError, History, Next, Pairing, Play, Recorded, Settings, Wait
from .scoring import group_points


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket slot order for a bracket of ``size`` (a power of two):
    slots ``2i`` and ``2i + 1`` meet in round 1."""
    order = [1]
    while len(order) < size:
        m = 2 * len(order)
        order = [x for s in order for x in (s, m + 1 - s)]
    return order


class Knockout(Format):
    """Single elimination (see the module docstring)."""

    name = "knockout"

    @classmethod
    def check(cls, settings: Settings) -> None:
        super().check(settings)
        if tuple(settings.table_sizes) != (2,):
            raise FormatError(
                f"a knockout plays two-player tables (--tables 2), got {list(settings.table_sizes)}"
            )
        if settings.entries < 2:
            raise FormatError(f"a knockout needs at least 2 bots, got {settings.entries}")
        if settings.rounds is not None:
            raise FormatError("a knockout's rounds follow from the field size; --rounds is for Swiss")
        order = settings.options.get("order")
        if order is not None and sorted(order) != list(range(settings.entries)):
            raise FormatError(f"a knockout's seeding order must list each entry once, got {order}")

    @property
    def order(self) -> list[int]:
        """Entries by seed, best first."""
        given = self.settings.options.get("order")
        return [int(e) for e in given] if given is not None else list(range(self.settings.entries))

    @property
    def size(self) -> int:
        return 1 << math.ceil(math.log2(self.settings.entries))

    def planned(self) -> int | None:
        return (self.settings.entries - 1) * self.settings.games * 2

    def seed_of(self, entry: int) -> int:
        return self.order.index(entry) + 1

    def first_round(self) -> list[int | None]:
        """Round 1's slots: entries in bracket order, None for a bye."""
        order = self.order
        return [order[s - 1] if s <= len(order) else None for s in bracket_order(self.size)]

    def winner(self, a: int, b: int, matches: list[Recorded]) -> int:
        """Who goes through: more points, then more in-game score, then the better seed."""
        points, score = group_points(matches)
        return min((a, b), key=lambda e: (-round(points.get(e, 0.0), 9), -score.get(e, 0), self.seed_of(e)))

    def decided_by(self, w: int, lost: int, matches: list[Recorded]) -> str:
        """How ``w`` went through against ``lost``: ``2-0 in points``, or, level on points, on the
        total in-game score or as the better seed."""
        points, score = group_points(matches)
        pw, pl = points.get(w, 0.0), points.get(lost, 0.0)
        if round(pw, 9) != round(pl, 9):
            return f"{pw:g}-{pl:g} in points"
        sw, sl = score.get(w, 0), score.get(lost, 0)
        if sw != sl:
            return f"level on points ({pw:g}-{pl:g}), on total score {sw}-{sl}"
        return f"level on points and total score, as seed {self.seed_of(w)} against {self.seed_of(lost)}"

    def next(self, history: History) -> Next:
        if any(not m.done for m in history.matches):
            return Wait()
        alive, rnd, _ = self.bracket(history)
        if len(alive) == 1:
            return Finished()
        return self.pair_round(rnd, alive)

    def bracket(self, history: History) -> tuple[list[int | None], int, list[tuple[int, int, int, int, str]]]:
        """Replay the bracket over the finished rounds: the slots still alive, the first round
        not played yet, and every decided pairing as ``(round, a, b, winner, how)``
        (:meth:`decided_by`)."""
        by_round: dict[int, list[Recorded]] = {}
        for m in history.matches:
            by_round.setdefault(m.round, []).append(m)
        alive: list[int | None] = self.first_round()
        decided: list[tuple[int, int, int, int, str]] = []
        rnd = 1
        while len(alive) > 1:
            played = by_round.get(rnd)
            if played is None or any(not m.done for m in played):
                break
            nxt: list[int | None] = []
            for i in range(0, len(alive), 2):
                a, b = alive[i], alive[i + 1]
                if a is None or b is None:
                    nxt.append(a if b is None else b)
                    continue
                prefix = f"k{rnd}m{i // 2}g"
                ms = [m for m in played if m.group.startswith(prefix)]
                w = self.winner(a, b, ms)
                decided.append((rnd, a, b, w, self.decided_by(w, b if w == a else a, ms)))
                nxt.append(w)
            alive = nxt
            rnd += 1
        return alive, rnd, decided

    def report(self, history: History, names: Sequence[str]) -> list[str]:
        """Each decided pairing by round, and once there is a champion, the champion and the
        places (:meth:`places`: ``places: 1. a; 2. b; 3-4. c, d``)."""
        alive, _, decided = self.bracket(history)
        lines = [
            f"round {r}: {names[w]} beat {names[b if w == a else a]}, {how}" for r, a, b, w, how in decided
        ]
        if len(alive) == 1 and alive[0] is not None:
            lines.append(f"champion: {names[alive[0]]}")
            # places apart by "; ", the entries of a shared place by ", " (one separator for
            # both read "3-4. c, d, 5. e" as if d and 5. e were alike)
            places = self._places(alive, decided)
            shown = "; ".join(f"{p}. {', '.join(names[e] for e in es)}" for p, es in places)
            lines.append(f"places: {shown}")
        return lines

    def ranking(self, history: History) -> list[int] | None:
        """A finished knockout's places in order (:meth:`places`); None before its champion."""
        return [e for _, es in self.places(history) for e in es] or None

    def places(self, history: History) -> list[tuple[str, list[int]]]:
        """The final standing of a finished knockout, best first: the champion 1, the finalist 2,
        and the entries out in the same round share the places below those who went further
        (the semi-finals' losers ``3-4``, the quarter-finals' ``5-8``, ...: as many as lost in
        that round); within a shared place, by seed. Empty until there is a champion."""
        alive, _, decided = self.bracket(history)
        return self._places(alive, decided)

    def _places(
        self, alive: list[int | None], decided: list[tuple[int, int, int, int, str]]
    ) -> list[tuple[str, list[int]]]:
        """:meth:`places` from the replayed :meth:`bracket` (``alive`` and ``decided``)."""
        if len(alive) != 1 or alive[0] is None:
            return []
        out: dict[int, list[int]] = {}
        for rnd, a, b, w, _ in decided:
            out.setdefault(rnd, []).append(b if w == a else a)
        places: list[tuple[str, list[int]]] = [("1", [alive[0]])]
        above = 1
        for rnd in sorted(out, reverse=True):
            lost = sorted(out[rnd], key=self.seed_of)
            first, last = above + 1, above + len(lost)
            places.append((str(first) if first == last else f"{first}-{last}", lost))
            above = last
        return places

    def pair_round(self, rnd: int, alive: list[int | None]) -> Play:
        """Round ``rnd`` between the slots ``alive`` (None: an empty slot, a bye for its pair)."""
        pairings: list[Pairing] = []
        byes: list[Bye] = []
        for game in range(self.settings.games):
            for i in range(0, len(alive), 2):
                a, b = alive[i], alive[i + 1]
                if a is None or b is None:
                    continue
                seed = derive_seed(self.settings.seed, rnd, i // 2, game)
                for seating in rotations((a, b)):
                    pairings.append(Pairing(seed, f"k{rnd}m{i // 2}g{game}", seating, rnd))
        for i in range(0, len(alive), 2):
            a, b = alive[i], alive[i + 1]
            through = a if b is None else b if a is None else None
            if through is not None:
                byes.append(Bye(rnd, through, 0.0))
        return Play(tuple(pairings), tuple(byes))
