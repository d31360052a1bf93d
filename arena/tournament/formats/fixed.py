"""Formats whose whole schedule is known from the settings: round robin and gauntlet.

They hand out everything at once (the first :meth:`next`), then wait until every match is done.
Each table size's schedule is exactly that of :mod:`arena.tournament.pairing`; several sizes
are interleaved (:func:`interleave`).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.tournament import pairing

from .base import Finished, Format, FormatError, History, Next, Pairing, Play, Settings, Wait


def interleave(schedules: Sequence[Sequence[Pairing]]) -> list[Pairing]:
    """The table sizes' schedules merged group by group so that each stays as far along as the
    others: the next group comes from the schedule whose share done would be the smallest after
    it (ties to the earlier schedule).  A run stopped partway has played about the same share
    of every table size, and within each size the order (seed-major, balanced) is kept.  A
    duplicate group's matches stay together."""
    groups: list[list[list[Pairing]]] = []
    for schedule in schedules:
        runs: list[list[Pairing]] = []
        for p in schedule:
            if runs and runs[-1][0].group == p.group:
                runs[-1].append(p)
            else:
                runs.append([p])
        groups.append(runs)
    taken = [0] * len(groups)
    out: list[Pairing] = []
    while True:
        left = [i for i, g in enumerate(groups) if taken[i] < len(g)]
        if not left:
            return out
        i = min(left, key=lambda i: ((taken[i] + 1) / len(groups[i]), i))
        out.extend(groups[i][taken[i]])
        taken[i] += 1


def _named(k: int, schedule: Sequence[pairing.Pairing]) -> list[Pairing]:
    """One table size's schedule as the format's pairings, groups named ``<k>p-<group>``."""
    return [Pairing(p.seed, f"{k}p-{p.group}", p.seating) for p in schedule]


class _Fixed(Format):
    """A schedule fixed in advance."""

    def schedule(self) -> list[Pairing]:
        raise NotImplementedError

    def next(self, history: History) -> Next:
        if not history.matches:
            return Play(tuple(self.schedule()))
        if all(m.done for m in history.matches):
            return Finished()
        return Wait()

    def planned(self) -> int | None:
        """``len(self.schedule())``, counted without building it (a schedule of millions of
        matches took minutes to build only to be counted)."""
        s = self.settings
        return sum(self.tables(k) * s.games * k for k in s.table_sizes)

    def tables(self, k: int) -> int:
        """How many tables of ``k`` seats the schedule has (each played ``games`` seeds under
        every one of its ``k`` seat rotations)."""
        raise NotImplementedError


class RoundRobin(_Fixed):
    """Every table of each table size (or a balanced subset), ``games`` seeds per table, each
    seed under every seat rotation."""

    name = "round-robin"

    @classmethod
    def check(cls, settings: Settings) -> None:
        super().check(settings)
        for k in settings.table_sizes:
            if settings.entries < k:
                raise FormatError(
                    f"tables of {k} need at least {k} bots in the field, got {settings.entries}"
                )

    def tables(self, k: int) -> int:
        return pairing.table_count(self.settings.entries, k)

    def schedule(self) -> list[Pairing]:
        s = self.settings
        sizes = s.table_sizes
        return interleave([_named(k, pairing.round_robin(s.entries, k, s.games, s.seed + k)) for k in sizes])


class Gauntlet(_Fixed):
    """A candidate (entry 0) against tables drawn from the field (entries 1..)."""

    name = "gauntlet"

    @classmethod
    def check(cls, settings: Settings) -> None:
        super().check(settings)
        field = settings.entries - 1
        for k in settings.table_sizes:
            if field < k - 1:
                raise FormatError(f"tables of {k} need at least {k - 1} bots in the field, got {field}")

    def tables(self, k: int) -> int:
        return pairing.table_count(self.settings.entries - 1, k - 1)

    def schedule(self) -> list[Pairing]:
        s = self.settings
        # seed + k, as a round robin: two table sizes' groups of one number do not share dice
        field = s.entries - 1
        return interleave([_named(k, pairing.gauntlet(field, k, s.games, s.seed + k)) for k in s.table_sizes])
