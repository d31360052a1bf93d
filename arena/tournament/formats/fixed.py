"""Formats whose whole schedule is known from the settings: round robin and gauntlet.

They hand out everything at once (the first :meth:`next`), then wait until every match is done.
Their schedules are exactly those of :mod:`arena.tournament.pairing`.
"""

from __future__ import annotations

from arena.tournament import pairing

from .base import Finished, Format, FormatError, History, Next, Pairing, Play, Settings, Wait


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
        return len(self.schedule())


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

    def schedule(self) -> list[Pairing]:
        s = self.settings
        out: list[Pairing] = []
        for k in s.table_sizes:
            for p in pairing.round_robin(s.entries, k, s.games, s.seed + k):
                out.append(Pairing(p.seed, f"{k}p-{p.group}", p.seating))
        return out


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

    def schedule(self) -> list[Pairing]:
        s = self.settings
        out: list[Pairing] = []
        for k in s.table_sizes:
            # seed + k, as a round robin: two table sizes' groups of one number do not share dice
            for p in pairing.gauntlet(s.entries - 1, k, s.games, s.seed + k):
                out.append(Pairing(p.seed, f"{k}p-{p.group}", p.seating))
        return out
